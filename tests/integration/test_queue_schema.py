"""procrastinate's tables are created once and then kept current with its migration files,
on a real PostgreSQL."""

from __future__ import annotations

import psycopg
import pytest

from service.storage.migrations import migrate
from service.storage.queue_schema import (
    BASELINE_VERSION,
    QueueMigration,
    apply_queue_schema,
    shipped_migrations,
)

pytestmark = pytest.mark.anyio

NEWER = QueueMigration(
    "99.00.00_01_pre_add_marker.sql",
    "99.00.00",
    "CREATE TABLE procrastinate_upgrade_marker (id integer);"
    "INSERT INTO procrastinate_upgrade_marker VALUES (1);",
)
"""A migration of some future procrastinate release."""


def recorded(url: str) -> list[str]:
    with psycopg.connect(url) as conn:
        return [row[0] for row in conn.execute("SELECT name FROM queue_migrations ORDER BY 1")]


def marker_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM procrastinate_upgrade_marker").fetchone()
    assert row is not None
    return int(row[0])


async def upgrade(url: str, migrations: list[QueueMigration]) -> list[str]:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        return await apply_queue_schema(conn, migrations)


def test_the_installed_procrastinate_ships_migrations_we_can_read() -> None:
    migrations = shipped_migrations()

    assert migrations, "procrastinate's migration files were not found"
    assert all(m.sql.strip() for m in migrations)
    assert max(m.version for m in migrations) >= BASELINE_VERSION


async def test_a_new_queue_is_created_and_counts_every_shipped_migration_as_had(
    empty_database_url: str,
) -> None:
    applied = await migrate(empty_database_url, after=apply_queue_schema)
    assert applied, "our own migrations ran"

    with psycopg.connect(empty_database_url) as conn:
        row = conn.execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL").fetchone()
    assert row == (True,)
    assert recorded(empty_database_url) == [m.name for m in shipped_migrations()]
    assert await upgrade(empty_database_url, shipped_migrations()) == []


async def test_a_newer_migration_applies_once_and_is_recorded(db_url: str) -> None:
    migrations = [*shipped_migrations(), NEWER]

    first = await upgrade(db_url, migrations)
    second = await upgrade(db_url, migrations)

    assert first == [NEWER.name]
    assert second == []
    assert marker_rows(db_url) == 1
    assert NEWER.name in recorded(db_url)


async def test_a_queue_from_before_the_record_is_taken_as_at_the_baseline(db_url: str) -> None:
    with psycopg.connect(db_url, autocommit=True) as conn:
        conn.execute("DELETE FROM queue_migrations")

    applied = await upgrade(db_url, [*shipped_migrations(), NEWER])

    # Re-running a shipped migration on the live schema would fail; only the newer one runs.
    newer_than_baseline = [m.name for m in shipped_migrations() if m.version > BASELINE_VERSION]
    assert applied == [*newer_than_baseline, NEWER.name]
    assert marker_rows(db_url) == 1


async def test_a_failing_migration_leaves_neither_changes_nor_a_record(db_url: str) -> None:
    broken = QueueMigration(
        "99.00.00_01_pre_broken.sql",
        "99.00.00",
        "CREATE TABLE procrastinate_half_done (id integer); SELECT no_such_function();",
    )

    with pytest.raises(psycopg.errors.UndefinedFunction):
        await upgrade(db_url, [*shipped_migrations(), broken])

    assert broken.name not in recorded(db_url)
    with psycopg.connect(db_url) as conn:
        row = conn.execute("SELECT to_regclass('procrastinate_half_done')").fetchone()
    assert row == (None,)
