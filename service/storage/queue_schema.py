"""procrastinate's own tables: created on first start, then kept current with the
migration files procrastinate ships.

procrastinate keeps no record of which of its migrations a database has had, so
Shortlist keeps one, in ``queue_migrations``:

* a database whose queue is created here from ``SchemaManager.get_schema()`` has
  had every migration shipped with the installed procrastinate;
* a queue created before that record existed was created by procrastinate 3.10
  at least (the oldest Shortlist allows), so it has had every migration up to
  :data:`BASELINE_VERSION`, that release's schema version;
* the rest apply in file-name order (a version's ``pre`` file before its
  ``post`` file), each in a transaction with its record.

It all runs at start-up, under the migration lock (see :mod:`service.storage.migrations`),
so an upgrade that brings a procrastinate with new migrations stops the old
workers before new ones start (docs/deploy.md).
"""

from __future__ import annotations

import logging
import re
from pathlib import Path
from typing import Any, NamedTuple

from procrastinate.schema import SchemaManager

logger = logging.getLogger(__name__)

BASELINE_VERSION = "03.04.00"
"""The schema version of procrastinate 3.10, the oldest release Shortlist depends on."""

_MIGRATION_FILE = re.compile(r"(\d{2}\.\d{2}\.\d{2})_\d{2}_[a-z0-9_]+\.sql")


class QueueMigration(NamedTuple):
    name: str
    """The file name, e.g. ``03.04.00_01_pre_add_retry_failed_job_procedure.sql``."""
    version: str
    """The procrastinate schema version it brings, e.g. ``03.04.00``."""
    sql: str


def shipped_migrations(directory: Path | None = None) -> list[QueueMigration]:
    """The migration files in ``directory`` (default: the installed procrastinate's), in order."""
    directory = directory or Path(SchemaManager.get_migrations_path())
    found = [
        QueueMigration(path.name, match.group(1), path.read_text(encoding="utf-8"))
        for path in directory.iterdir()
        if (match := _MIGRATION_FILE.fullmatch(path.name))
    ]
    return sorted(found)


async def apply_queue_schema(
    conn: Any, migrations: list[QueueMigration] | None = None
) -> list[str]:
    """Create the queue's tables, or bring them up to date; return the migrations applied now.

    ``conn`` is an autocommit connection holding the migration lock.
    """
    migrations = shipped_migrations() if migrations is None else migrations
    cursor = await conn.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL")
    queue_exists = (await cursor.fetchone())[0]
    if not queue_exists:
        async with conn.transaction():
            await conn.execute(SchemaManager.get_schema())
            await _record(conn, [m.name for m in migrations])
        logger.info("created the job queue's tables")
        return []

    cursor = await conn.execute("SELECT name FROM queue_migrations")
    recorded = {row[0] for row in await cursor.fetchall()}
    if not recorded:
        baseline = [m.name for m in migrations if m.version <= BASELINE_VERSION]
        await _record(conn, baseline)
        recorded.update(baseline)

    applied: list[str] = []
    for migration in migrations:
        if migration.name in recorded:
            continue
        async with conn.transaction():
            await conn.execute(migration.sql)
            await _record(conn, [migration.name])
        logger.info("applied the job queue's migration %s", migration.name)
        applied.append(migration.name)
    return applied


async def _record(conn: Any, names: list[str]) -> None:
    for name in names:
        await conn.execute(
            "INSERT INTO queue_migrations (name) VALUES (%s) ON CONFLICT DO NOTHING", (name,)
        )
