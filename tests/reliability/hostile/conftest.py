"""A live Shortlist (uvicorn on loopback, real database) and one user with a ready document."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest

from service.runtime import open_runtime
from service.services import users
from service.services.ingest import ingest_file
from service.settings import Settings
from service.storage.db import connection
from tests.conftest import create_database, drop_database, make_settings
from tests.integration.mcp.conftest import live_app


class Target(NamedTuple):
    url: str
    token: str
    project_id: str
    document_id: str

    def client(self, **headers: str) -> httpx.Client:
        """An HTTP client for the service, signed in with the user's token."""
        return httpx.Client(
            base_url=self.url,
            headers={"Authorization": f"Bearer {self.token}", **headers},
            timeout=30,
        )


async def _populate(settings: Settings, source_dir: Path) -> tuple[str, str, str]:
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            carol = await users.create_user(conn, "carol")
        path = source_dir / "field-notes.md"
        path.write_text("# Field notes\n\nThe survey of the northern coast took nine days.\n")
        ingested = await ingest_file(runtime, carol.project, path)
        assert ingested.document is not None, ingested.error
    return carol.token, str(carol.project.id), str(ingested.document.id)


@pytest.fixture(scope="session")
def target(
    server_url: str, template_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Target]:
    name = f"shortlist_test_hostile_{uuid.uuid4().hex[:12]}"
    db_url = create_database(server_url, name, template=template_database)
    # Rate limits off: fuzzing must reach the handlers, not the limiter.
    settings = make_settings(
        db_url,
        tmp_path_factory.mktemp("hostile-data"),
        server={"run_worker": False, "search_rate_per_minute": 0, "upload_rate_per_minute": 0},
    )
    try:
        token, project_id, document_id = asyncio.run(
            _populate(settings, tmp_path_factory.mktemp("hostile-files"))
        )
        with live_app(settings) as url:
            yield Target(url, token, project_id, document_id)
    finally:
        drop_database(server_url, name)
