"""This process's holds on the embedded server: start or join it, stop it with the last hold."""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

import psycopg
from psycopg import sql

from service.storage.embedded_pg.cluster import Cluster, cluster_for, prepare_data_dir
from service.storage.embedded_pg.errors import (
    ADVICE,
    DatabaseCreateFailed,
    DataDirUnusable,
    EmbeddedPostgresUnavailable,
)
from service.storage.embedded_pg.holders import data_dir_lock, live_holders, me, write_holders
from service.storage.embedded_pg.server import running_postmaster, start_server, stop_server
from service.storage.embedded_pg.sockets import server_url

logger = logging.getLogger(__package__)  # the package logs as one: "service.storage.embedded_pg"


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
    data_dir = prepare_data_dir(data_dir)
    try:
        with _registry_lock, data_dir_lock(data_dir):
            cluster = cluster_for(data_dir)
            url = _serve(cluster, database)
            _holds[data_dir] = _holds.get(data_dir, 0) + 1
    except OSError as exc:
        raise DataDirUnusable(
            f"cannot use the PostgreSQL data directory {data_dir}: {exc}; "
            f"fix the cause, choose another directory {ADVICE}."
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


def _serve(cluster: Cluster, database: str) -> str:
    """Under the lock: have a ready server with ``database``, this process a holder."""
    data_dir = cluster.data_dir
    me_holding = _holds.get(data_dir, 0) > 0
    others = [h for h in live_holders(data_dir) if h.pid != os.getpid()]
    postmaster = running_postmaster(data_dir)
    if postmaster is not None and not others and not me_holding:
        logger.warning(
            "embedded PostgreSQL in %s (pid %d) has no live holder left; restarting it",
            data_dir,
            postmaster.pid,
        )
        stop_server(data_dir)
        postmaster = None
    started_here = postmaster is None
    try:
        if started_here:
            start_server(cluster)
        url = server_url(data_dir, database)
        _ensure_database(server_url(data_dir, "postgres"), database)
        write_holders(data_dir, [*others, me()])
    except BaseException:
        if started_here and not others and not me_holding:
            stop_server(data_dir)
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
            with data_dir_lock(data_dir):
                others = [h for h in live_holders(data_dir) if h.pid != os.getpid()]
                write_holders(data_dir, others)
                if not others:
                    stop_server(data_dir)
        except (OSError, EmbeddedPostgresUnavailable) as exc:
            logger.error("could not release the embedded PostgreSQL in %s: %s", data_dir, exc)


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
            f"created or checked: {exc}; {ADVICE}."
        ) from exc
