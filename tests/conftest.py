"""Shared fixtures: a real PostgreSQL, one fresh database per test, and the app.

With ``DATABASE_URL`` set (CI: the machine's PostgreSQL) that server is used;
without it an embedded PostgreSQL is started once for the session in a temp
directory. Either way the schema is migrated once into a template database and
each test gets ``CREATE DATABASE … TEMPLATE`` — real connections, no mocks.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql as pgsql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from service.runtime import prepare_database
from service.settings import Settings


@pytest.fixture(scope="session")
def server_url() -> Iterator[str]:
    """URL of a maintenance database on the PostgreSQL server tests use."""
    external = os.environ.get("DATABASE_URL")
    if external:
        yield external
        return
    from service.storage.embedded_pg import start_embedded_postgres

    # Not tmp_path: pytest resets its base to mode 0700 whenever a session starts,
    # which would lock the unprivileged server account (used when running as root) out.
    data_dir = Path(tempfile.mkdtemp(prefix="shortlist-test-pg-"))
    embedded = start_embedded_postgres(data_dir / "data", database="postgres")
    try:
        yield embedded.url
    finally:
        embedded.stop()
        shutil.rmtree(data_dir, ignore_errors=True)


def database_url(server: str, name: str) -> str:
    """The same server, another database."""
    params = conninfo_to_dict(server)
    params["dbname"] = name
    return make_conninfo(**params)


def _admin(server: str) -> psycopg.Connection[tuple[object, ...]]:
    return psycopg.connect(server, autocommit=True)


def create_database(server: str, name: str, template: str | None = None) -> str:
    query = pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name))
    if template:
        query = pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
            pgsql.Identifier(name), pgsql.Identifier(template)
        )
    with _admin(server) as conn:
        conn.execute(query)
    return database_url(server, name)


def drop_database(server: str, name: str) -> None:
    with _admin(server) as conn:
        conn.execute(
            pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name))
        )


@pytest.fixture(scope="session")
def template_database(server_url: str) -> Iterator[str]:
    """A migrated database that every test database is copied from."""
    name = f"shortlist_test_template_{os.getpid()}"
    drop_database(server_url, name)
    url = create_database(server_url, name)
    asyncio.run(prepare_database(url))
    try:
        yield name
    finally:
        drop_database(server_url, name)


@pytest.fixture
def empty_database_url(server_url: str) -> Iterator[str]:
    """A brand-new database with no schema at all."""
    name = f"shortlist_test_{uuid.uuid4().hex[:12]}"
    url = create_database(server_url, name)
    try:
        yield url
    finally:
        drop_database(server_url, name)


@pytest.fixture
def db_url(server_url: str, template_database: str) -> Iterator[str]:
    """A fresh, migrated database for one test."""
    name = f"shortlist_test_{uuid.uuid4().hex[:12]}"
    url = create_database(server_url, name, template=template_database)
    try:
        yield url
    finally:
        drop_database(server_url, name)


@pytest.fixture
def settings(db_url: str, tmp_path: Path) -> Settings:
    """Settings pointing at the test's database and a private data directory."""
    return make_settings(db_url, tmp_path)


def make_settings(db_url: str, data_dir: Path, **overrides: object) -> Settings:
    values: dict[str, object] = {
        "database_url": db_url,
        "data_dir": data_dir,
        "search": {"reranker": "none"},
        # A spare extraction process costs seconds of CPU to load; hundreds of short-lived
        # test services would each start one. Tests that are about spares turn them on.
        "extraction": {"warm_processes": 0},
    }
    values.update(overrides)
    return Settings.model_validate(values)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def client(settings: Settings) -> AsyncIterator[object]:
    """The app in-process, lifespan and all, behind an HTTP client."""
    from litestar.testing import AsyncTestClient

    from service.app import create_app

    async with AsyncTestClient(app=create_app(settings)) as test_client:
        yield test_client
