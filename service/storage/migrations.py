"""Apply ``sql/NNN_name.sql`` migrations in order, once, at start-up.

Each migration runs in its own transaction together with the row that records
it in ``schema_migrations``. A session-level advisory lock serialises
concurrent start-ups: the second process waits, then finds nothing left to do.
The extraction queue's own tables (procrastinate's) are applied under the same
lock by :func:`service.storage.queue_schema.apply_queue_schema`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence

import psycopg

import sql
from sql import Migration

logger = logging.getLogger(__name__)

#: Arbitrary, fixed key of the advisory lock that serialises migrations.
MIGRATION_LOCK_KEY = 0x5_4_0_1_1_5_7  # "shortlist"

_CREATE_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version     integer PRIMARY KEY,
    name        text NOT NULL,
    applied_at  timestamptz NOT NULL DEFAULT now()
)
"""

AfterMigrate = Callable[[psycopg.AsyncConnection[object]], Awaitable[object]]


async def migrate(
    url: str,
    migrations: Sequence[Migration] | None = None,
    *,
    after: AfterMigrate | None = None,
) -> list[Migration]:
    """Apply the migrations not applied yet; return the ones this call applied."""
    pending_source = sql.migrations if migrations is None else migrations
    applied_now: list[Migration] = []
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK_KEY,))
        try:
            await conn.execute(_CREATE_TABLE)
            cursor = await conn.execute("SELECT version FROM schema_migrations")
            done = {row[0] for row in await cursor.fetchall()}
            for migration in pending_source:
                if migration.version in done:
                    continue
                async with conn.transaction():
                    await conn.execute(migration.sql)
                    await conn.execute(
                        "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                        (migration.version, migration.name),
                    )
                logger.info("applied migration %03d_%s", migration.version, migration.name)
                applied_now.append(migration)
            if after is not None:
                await after(conn)
        finally:
            await conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK_KEY,))
    return applied_now


async def applied_versions(url: str) -> list[int]:
    """Versions recorded in ``schema_migrations``, ascending."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        cursor = await conn.execute("SELECT version FROM schema_migrations ORDER BY version")
        return [row[0] for row in await cursor.fetchall()]
