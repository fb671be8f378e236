"""Put a few real documents into a project through the real upload flow, once per module."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import psycopg
from litestar.testing import AsyncTestClient

from service.app import create_app
from tests.conftest import create_database, drop_database, make_settings
from tests.integration.documents.conftest import Uploader, new_user

#: Markdown files whose words overlap unevenly with QUERY, so BM25 ranks them apart.
DOCUMENTS = {
    "photosynthesis.md": (
        "# Photosynthesis\n\nChloroplasts capture light energy and store it as sugar. "
        "Light reactions split water; the Calvin cycle fixes carbon dioxide.\n"
    ),
    "respiration.md": (
        "# Respiration\n\nMitochondria turn sugar into energy. Oxidative phosphorylation "
        "makes adenosine triphosphate; light plays no part.\n"
    ),
    "membranes.md": (
        "# Membranes\n\nLipid bilayers keep cells intact. Channels let ions cross; pumps "
        "spend energy to move them against the gradient.\n"
    ),
}
QUERY = "light energy sugar"


class SeededProject(NamedTuple):
    db_url: str
    data_dir: Path
    token: str
    project_id: str


async def upload_markdown(
    client: Any, token: str, project_id: Any, files: dict[str, str], within: float = 60.0
) -> list[dict[str, Any]]:
    """Upload, register and wait for each file; return the settled documents."""
    uploader = Uploader(client, token)
    settled = []
    for name, text in files.items():
        created = await uploader.upload(project_id, name, text.encode(), "text/markdown")
        assert created.status_code == 201, created.text
        settled.append(await uploader.wait_settled(created.json()["id"], within=within))
    return settled


async def _seed(db_url: str, data_dir: Path) -> SeededProject:
    alice = await new_user(db_url, "alice")
    async with AsyncTestClient(app=create_app(make_settings(db_url, data_dir))) as client:
        documents = await upload_markdown(client, alice.token, alice.project.id, DOCUMENTS)
    assert [document["status"] for document in documents] == ["ready"] * len(DOCUMENTS)
    return SeededProject(db_url, data_dir, alice.token, str(alice.project.id))


@contextmanager
def seeded_project(server_url: str, template: str, data_dir: Path) -> Iterator[SeededProject]:
    """A database of its own holding one user's project with DOCUMENTS ready."""
    name = f"shortlist_test_{uuid.uuid4().hex[:12]}"
    url = create_database(server_url, name, template=template)
    try:
        yield asyncio.run(_seed(url, data_dir))
    finally:
        drop_database(server_url, name)


def document_states(db_url: str) -> list[tuple[str, str, bool, bool]]:
    """(name, status, has markdown, has content hash) of every document, read with SQL."""
    with psycopg.connect(db_url) as conn:
        rows = conn.execute(
            "SELECT name, status, markdown IS NOT NULL, content_hash IS NOT NULL "
            "FROM documents ORDER BY name"
        ).fetchall()
    return [(str(a), str(b), bool(c), bool(d)) for a, b, c, d in rows]
