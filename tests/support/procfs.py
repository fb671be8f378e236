"""What Linux's /proc says about a process."""

from __future__ import annotations


def is_running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not exited (a zombie has)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def child_pids(pid: int) -> set[int]:
    """The running direct children of ``pid`` (Linux: /proc/PID/task/*/children)."""
    children: set[int] = set()
    try:
        import os

        for task in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{task}/children", encoding="ascii") as listing:
                children.update(int(number) for number in listing.read().split())
    except FileNotFoundError:
        pass
    return {child for child in children if is_running(child)}
