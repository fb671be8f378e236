"""Everything a running Shortlist process holds open, built once and torn down once.

The web app's lifespan and the CLI's commands both open a :class:`Runtime`, so
the database, migrations and pool are set up the same way whichever door a
request comes through.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from service.db import DatabaseLocation, Pool, create_pool, locate_database
from service.migrations import migrate
from service.settings import Settings

logger = logging.getLogger(__name__)


class Runtime:
    """The open resources of one process.

    A plain class on purpose: Litestar injects it as a dependency and would
    otherwise try to validate a dataclass field by field.
    """

    def __init__(self, *, settings: Settings, database: DatabaseLocation, pool: Pool) -> None:
        self.settings = settings
        self.database = database
        self.pool = pool


@contextlib.asynccontextmanager
async def open_runtime(settings: Settings) -> AsyncIterator[Runtime]:
    """Locate (or start) the database, migrate it, open the pool; undo all of it on exit."""
    database = locate_database(settings)
    try:
        await migrate(database.url)
        pool = create_pool(database.url, settings)
        await pool.open(wait=True, timeout=max(10.0, settings.database.pool_timeout))
        try:
            yield Runtime(settings=settings, database=database, pool=pool)
        finally:
            await pool.close()
    finally:
        database.close()
