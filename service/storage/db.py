"""PostgreSQL access: where the database is, the connection pool, and error translation.

Driver errors are translated once, here (:func:`database_error`): a connection
that cannot be had or is lost becomes :class:`~service.errors.DatabaseUnavailable`
(503), and a unique violation becomes whatever conflict the caller names. A
cancelled query (``QueryCanceled``) is not an outage and is left as it is: the
doors report it as an internal error.

Runtime queries are run by name (a block of ``sql/queries.sql``) through
:func:`fetch_one`, :func:`fetch_all` and :func:`execute`, with keyword
parameters named like the query's ``%(placeholders)s``, the way procrastinate's
``execute_query_one_async(query, **arguments)`` does::

    row = await fetch_one(conn, "fetch_user_by_name", name=name)
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
import psycopg.errors
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from service.errors import Conflict, DatabaseUnavailable
from sql import queries

if TYPE_CHECKING:
    from service.settings import Settings
    from service.storage.embedded_pg import EmbeddedPostgres

logger = logging.getLogger(__name__)

Connection = psycopg.AsyncConnection[DictRow]
Pool = AsyncConnectionPool[Connection]

#: How long the pool keeps retrying one lost connection before giving up on it. psycopg's
#: backoff doubles without a cap (1, 2, 4, 8… s) until this runs out, so a long window
#: means a long wait after the database returns; once a retry gives up, the next request
#: starts a fresh one at once. 10 s keeps the gap between attempts at 4 s or less.
RECONNECT_WINDOW_SECONDS = 10.0


@dataclass
class DatabaseLocation:
    """The database URL in use, and the embedded server that serves it, if any."""

    url: str
    embedded: EmbeddedPostgres | None = None

    def close(self) -> None:
        """Release this process's hold on the embedded server (a no-op for an external one)."""
        if self.embedded is not None:
            self.embedded.stop()
            self.embedded = None


def locate_database(settings: Settings) -> DatabaseLocation:
    """``DATABASE_URL`` when set; otherwise start (or join) the embedded server."""
    if settings.database_url is not None:
        return DatabaseLocation(settings.database_url.get_secret_value())
    from service.storage.embedded_pg import start_embedded_postgres

    data_dir = settings.database.embedded_dir or settings.data_dir / "postgres"
    embedded = start_embedded_postgres(data_dir)
    logger.info("using embedded PostgreSQL in %s", data_dir)
    return DatabaseLocation(embedded.url, embedded)


def connection_kwargs(settings: Settings) -> dict[str, Any]:
    """Options every connection of ours is opened with."""
    return {
        "autocommit": True,
        "row_factory": dict_row,
        "connect_timeout": settings.database.connect_timeout,
        "application_name": "shortlist",
    }


def create_pool(url: str, settings: Settings) -> Pool:
    """A closed pool; open it with ``await pool.open(wait=True)``."""
    return AsyncConnectionPool(
        url,
        connection_class=psycopg.AsyncConnection[DictRow],
        kwargs=connection_kwargs(settings),
        min_size=settings.database.pool_min_size,
        max_size=settings.database.pool_max_size,
        timeout=settings.database.pool_timeout,
        check=AsyncConnectionPool.check_connection,
        reconnect_timeout=RECONNECT_WINDOW_SECONDS,
        open=False,
        name="shortlist",
    )


@contextlib.asynccontextmanager
async def connection(pool: Pool) -> AsyncIterator[Connection]:
    """Lend one pooled connection, translating an outage into DatabaseUnavailable."""
    with translate_errors():
        async with pool.connection() as conn:
            yield conn


@contextlib.asynccontextmanager
async def lend(pool: Pool) -> AsyncIterator[Connection]:
    """Lend one pooled connection; only failing to get one is translated here.

    For a framework that throws the body's exceptions back into the code that
    lent the connection and expects them back unchanged (Litestar's generator
    dependencies turn any other exception into an ``ExceptionGroup``, a 500):
    errors raised while the connection is used come out as the driver raised
    them, and the door renders them with :func:`database_error`.
    """
    with translate_errors():
        conn = await pool.getconn()
    try:
        yield conn
    finally:
        await pool.putconn(conn)  # a broken connection is discarded, not pooled again


@contextlib.asynccontextmanager
async def snapshot(conn: Connection) -> AsyncIterator[Connection]:
    """Run the statements inside on one read-only snapshot (a ``REPEATABLE READ READ ONLY``
    transaction), so that what they read agrees as if one statement had read it all: a count
    read by one of them need not be read again by the next."""
    async with conn.transaction():
        await conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        yield conn


async def ping(pool: Pool) -> None:
    """Raise DatabaseUnavailable unless the database answers ``SELECT 1``."""
    async with connection(pool) as conn:
        await conn.execute("SELECT 1")


async def fetch_one(conn: Connection, query_name: str, /, **params: Any) -> DictRow | None:
    """The first row of the named query, or None when it returns none."""
    cursor = await conn.execute(queries[query_name], params or None)
    return await cursor.fetchone()


async def fetch_all(conn: Connection, query_name: str, /, **params: Any) -> list[DictRow]:
    """Every row of the named query."""
    cursor = await conn.execute(queries[query_name], params or None)
    return await cursor.fetchall()


async def execute(conn: Connection, query_name: str, /, **params: Any) -> None:
    """Run the named query for its effect, discarding any rows."""
    await conn.execute(queries[query_name], params or None)


def database_error(exc: BaseException) -> DatabaseUnavailable | None:
    """The error users see for a driver error, or None when it is not one we translate.

    The one place that decides: no connection to be had from the pool, or one
    lost (refused, terminated, timed out, reset), is DatabaseUnavailable;
    anything else, a cancelled query included, stays what it is.
    """
    if isinstance(exc, psycopg.errors.QueryCanceled):
        return None
    if isinstance(exc, PoolTimeout | psycopg.OperationalError):
        return DatabaseUnavailable()
    return None


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Turn losing the database into :class:`DatabaseUnavailable` (see :func:`database_error`)."""
    try:
        yield
    except (PoolTimeout, psycopg.Error) as exc:
        error = database_error(exc)
        if error is None:
            raise
        logger.warning("database unavailable: %s", exc.__class__.__name__)
        raise error from exc


@contextlib.contextmanager
def unique_violation_as(
    error: Conflict, *, by_index: Mapping[str, Conflict] | None = None
) -> Iterator[None]:
    """Raise ``error`` when the statement inside breaks a unique index (the error of
    ``by_index`` for the indexes it names)."""
    try:
        yield
    except psycopg.errors.UniqueViolation as exc:
        raise (by_index or {}).get(exc.diag.constraint_name or "", error) from exc
