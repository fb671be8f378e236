"""Who holds the server: the holders file, and the ``flock`` every step runs under.

Package-internal: ``HOLDERS_FILE``, ``me``, ``live_holders``, ``write_holders``
and ``data_dir_lock`` serve :mod:`service.storage.embedded_pg.lifecycle`.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

import psutil

from service.storage.embedded_pg.errors import ADVICE, DataDirBusy

logger = logging.getLogger(__package__)  # the package logs as one: "service.storage.embedded_pg"

HOLDERS_FILE = ".shortlist-holders.json"

_LOCK_TIMEOUT_S = 120.0


class _Holder(NamedTuple):
    pid: int
    started: float  # psutil create_time, tells a recycled pid apart


def me() -> _Holder:
    return _Holder(os.getpid(), psutil.Process().create_time())


def live_holders(data_dir: Path) -> list[_Holder]:
    """Holders on file whose process still runs; dead ones are dropped from the file."""
    path = data_dir / HOLDERS_FILE
    try:
        raw: Any = json.loads(path.read_text())
        recorded = [_Holder(int(item["pid"]), float(item["started"])) for item in raw]
    except FileNotFoundError:
        return []
    except (ValueError, TypeError, KeyError) as exc:
        logger.warning("ignoring unreadable %s: %s", path, exc)
        recorded = []
    live = [holder for holder in recorded if _holder_alive(holder)]
    if live != recorded:
        logger.info("pruned dead holders of %s: %s", data_dir, sorted(set(recorded) - set(live)))
        write_holders(data_dir, live)
    return live


def _holder_alive(holder: _Holder) -> bool:
    try:
        process = psutil.Process(holder.pid)
        return (
            process.status() != psutil.STATUS_ZOMBIE
            and abs(process.create_time() - holder.started) < 1.0
        )
    except psutil.Error:
        return False


def write_holders(data_dir: Path, holders: list[_Holder]) -> None:
    path = data_dir / HOLDERS_FILE
    staging = path.with_name(path.name + ".tmp")
    staging.write_text(json.dumps([h._asdict() for h in holders]))
    staging.replace(path)


@contextlib.contextmanager
def data_dir_lock(data_dir: Path) -> Iterator[None]:
    """Exclusive ``flock`` on the data directory; the kernel frees it if we die."""
    fd = os.open(data_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        deadline = time.monotonic() + _LOCK_TIMEOUT_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:  # held by another process: wait
                if time.monotonic() > deadline:
                    raise DataDirBusy(
                        f"{data_dir} has been locked by another Shortlist process for over "
                        f"{_LOCK_TIMEOUT_S:.0f} s; stop it, {ADVICE}."
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)
