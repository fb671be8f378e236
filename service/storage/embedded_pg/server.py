"""The server's processes: start and stop the postmaster, and end what a dead one left.

Package-internal: ``start_server``, ``stop_server`` and ``running_postmaster``
serve :mod:`service.storage.embedded_pg.lifecycle`.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shlex
import signal
import time
from pathlib import Path

import psutil

from service.storage.embedded_pg.cluster import Cluster, run
from service.storage.embedded_pg.errors import ADVICE, ServerStartFailed
from service.storage.embedded_pg.sockets import (
    PORT,
    SHORT_SOCKET_PREFIX,
    SUPERUSER,
    socket_dir_for,
    socket_dir_in_use,
)

logger = logging.getLogger(__package__)  # the package logs as one: "service.storage.embedded_pg"

_START_TIMEOUT_S = 60
_STOP_TIMEOUT_S = 30.0


def start_server(cluster: Cluster) -> None:
    """Initialise the cluster if needed and start it; raise with the log if it fails."""
    data_dir = cluster.data_dir
    if not (data_dir / "PG_VERSION").exists():
        initdb = run(
            cluster,
            [
                "initdb",
                "-D",
                str(data_dir),
                "-U",
                SUPERUSER,
                "--auth-local=trust",
                "--auth-host=reject",
                "--encoding=UTF8",
                "--no-locale",
                "--no-instructions",
            ],
            timeout=120,
        )
        if initdb.returncode != 0:
            raise ServerStartFailed(
                f"initdb failed in {data_dir}: {initdb.output.strip()[-1500:]}\n"
                f"Empty or remove that directory, {ADVICE}."
            )
    previous_socket_dir = socket_dir_in_use(data_dir)
    socket_dir = socket_dir_for(data_dir, cluster.account)
    _clear_stale_server(data_dir, {socket_dir, previous_socket_dir or socket_dir})
    options = shlex.join(["-c", "listen_addresses=", "-k", str(socket_dir), "-p", str(PORT)])
    log = data_dir / "server.log"
    started = run(
        cluster,
        [
            "pg_ctl",
            "start",
            "-w",
            "-t",
            str(_START_TIMEOUT_S),
            "-D",
            str(data_dir),
            "-l",
            str(log),
            "-o",
            options,
        ],
        timeout=_START_TIMEOUT_S + 30,
    )
    if started.returncode != 0 or running_postmaster(data_dir) is None:
        stop_server(data_dir)
        raise ServerStartFailed(
            f"PostgreSQL did not start in {data_dir}: {started.output.strip()[-500:]}\n"
            f"Log tail:\n{_tail(log)}\nFix the cause above, {ADVICE}."
        )
    logger.info("started embedded PostgreSQL in %s (socket in %s)", data_dir, socket_dir)


def stop_server(data_dir: Path) -> None:
    """Fast-shut the cluster's postmaster, then make sure no process of the cluster remains."""
    postmaster = running_postmaster(data_dir)
    if postmaster is not None:
        socket_dir = socket_dir_in_use(data_dir)
        with contextlib.suppress(psutil.Error):
            postmaster.send_signal(signal.SIGINT)  # fast shutdown, as `pg_ctl stop -m fast`
        if _wait_gone([postmaster], data_dir, _STOP_TIMEOUT_S):
            logger.info("stopped embedded PostgreSQL in %s", data_dir)
        if socket_dir is not None and socket_dir.name.startswith(SHORT_SOCKET_PREFIX):
            with contextlib.suppress(OSError):
                socket_dir.rmdir()  # ours, and empty once the server is gone
    _end_processes(_cluster_processes(data_dir), data_dir)


def _clear_stale_server(data_dir: Path, socket_dirs: set[Path]) -> None:
    """Before a start: end what is left of a dead postmaster, and its lock files.

    PostgreSQL refuses to start while ``postmaster.pid`` or the socket's
    ``.lock`` names a pid that exists, and a killed postmaster's pid may now be
    another process or a zombie its new parent has not reaped. Once no process
    of the cluster runs, such files are stale; one naming a pid that no longer
    exists is left to PostgreSQL, which cleans it up after its own checks.
    """
    _end_processes(_cluster_processes(data_dir), data_dir)
    lock_files = [data_dir / "postmaster.pid"]
    lock_files += [directory / f".s.PGSQL.{PORT}.lock" for directory in socket_dirs]
    for lock_file in lock_files:
        pid = _pid_in(lock_file)
        if pid is not None and psutil.pid_exists(pid):
            logger.warning("removing stale %s (pid %d is not a live postmaster)", lock_file, pid)
            lock_file.unlink(missing_ok=True)


def _end_processes(processes: list[psutil.Process], data_dir: Path) -> None:
    if not processes:
        return
    logger.warning("ending %d leftover PostgreSQL processes of %s", len(processes), data_dir)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for process in processes:
            with contextlib.suppress(psutil.Error):
                process.send_signal(sig)
        if _wait_gone(processes, data_dir, 5.0):
            return


def _wait_gone(processes: list[psutil.Process], data_dir: Path, timeout: float) -> bool:
    """Wait until none of ``processes`` still runs; a zombie counts as gone.

    Not ``psutil.wait_procs``: the postmaster is not our child, and whoever
    inherits it (PID 1 of a container, say) may be slow to reap it.
    """
    deadline = time.monotonic() + timeout
    while any(_belongs_to(process, data_dir) for process in processes):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    _reap_if_ours(processes)
    return True


def _reap_if_ours(processes: list[psutil.Process]) -> None:
    """Reap those that exited as our children: as PID 1 of a container we inherit them."""
    for process in processes:
        with contextlib.suppress(psutil.Error, ChildProcessError):
            if process.ppid() == os.getpid() and process.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(process.pid, os.WNOHANG)


def _pid_in(lock_file: Path) -> int | None:
    """The pid on the first line of a PostgreSQL lock file."""
    try:
        return int(lock_file.read_text().split("\n", 1)[0])
    except (FileNotFoundError, ValueError):
        return None


def running_postmaster(data_dir: Path) -> psutil.Process | None:
    """The live postmaster named by ``postmaster.pid``, if it really is this cluster's."""
    pid = _pid_in(data_dir / "postmaster.pid")
    if pid is None:
        return None
    try:
        process = psutil.Process(pid)
    except psutil.Error:
        return None
    return process if _belongs_to(process, data_dir) else None


def _cluster_processes(data_dir: Path) -> list[psutil.Process]:
    """Every live ``postgres`` process of this cluster: they all run in the data directory."""
    return [
        process
        for process in psutil.process_iter(["name"])
        if process.info["name"] == "postgres" and _belongs_to(process, data_dir)
    ]


def _belongs_to(process: psutil.Process, data_dir: Path) -> bool:
    try:
        return (
            process.name() == "postgres"
            and process.status() != psutil.STATUS_ZOMBIE
            and Path(process.cwd()) == data_dir
        )
    except psutil.Error:
        return False


def _tail(log: Path, lines: int = 15) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
