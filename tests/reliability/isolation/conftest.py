"""Two users in one real database: alice owns a ready document, bob tries to reach it.

Alice's document is ingested once per session through the same service as
``shortlist ingest`` (real extractor, real blob store, real database). Every
isolation test then acts as bob and checks that nothing of alice's comes back.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

from service.runtime import open_runtime
from service.services import document_requests, projects, users
from service.services.ingest import ingest_file
from service.settings import Settings
from service.storage.db import connection
from tests.conftest import create_database, drop_database, make_settings
from tests.integration.documents.conftest import make_pdf

ALICE_PROJECT = "heliotrope-private"
ALICE_DOCUMENT = "heliotrope-memorandum.pdf"
#: A phrase only alice's document contains.
ALICE_PHRASE = "heliotrope cartography memorandum"
#: The title of the document alice's assistant asked for.
ALICE_REQUEST_TITLE = "Heliotrope survey atlas"


class World(NamedTuple):
    settings: Settings
    alice_token: str
    bob_token: str
    alice_project_id: str
    alice_default_project_id: str
    alice_document_id: str
    alice_user_id: str
    bob_project_id: str
    alice_request_id: str

    def alice_ids(self) -> list[str]:
        return [
            self.alice_project_id,
            self.alice_document_id,
            self.alice_default_project_id,
            self.alice_request_id,
        ]

    def alice_secrets(self) -> dict[str, str]:
        """Everything of alice's that bob must never see, by what it is."""
        return {
            "alice's token": self.alice_token,
            "alice's user id": self.alice_user_id,
            "alice's project id": self.alice_project_id,
            "alice's default project id": self.alice_default_project_id,
            "alice's document id": self.alice_document_id,
            "alice's project name": ALICE_PROJECT,
            "alice's document name": ALICE_DOCUMENT,
            "alice's document text": ALICE_PHRASE,
            "alice's document text (one word)": "heliotrope",
            "alice's request id": self.alice_request_id,
            "alice's request title": ALICE_REQUEST_TITLE,
        }


def assert_no_alice_data(world: World, response_text: str, asked_with: str = "") -> None:
    """Nothing of alice's in ``response_text`` except what the caller itself sent."""
    for what, secret in world.alice_secrets().items():
        if secret.lower() in asked_with.lower():
            continue
        assert secret.lower() not in response_text.lower(), f"{what} leaked: {response_text!r}"


async def _populate(settings: Settings, source_dir: Path) -> World:
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            alice = await users.create_user(conn, "alice")
            bob = await users.create_user(conn, "bob")
            project = await projects.create_project(conn, alice.user.id, ALICE_PROJECT)
        path = source_dir / ALICE_DOCUMENT
        path.write_bytes(
            make_pdf([f"The {ALICE_PHRASE} lists every survey of the northern coast."])
        )
        ingested = await ingest_file(runtime, project, path)
        assert ingested.document is not None, ingested.error
        assert ingested.outcome is not None and ingested.outcome.status == "ready", ingested
        async with connection(runtime.pool) as conn:
            principal = await users.authenticate(conn, alice.token)
            logged = await document_requests.request_document(
                runtime, conn, principal, project_id=project.id, title=ALICE_REQUEST_TITLE
            )
    return World(
        settings=settings,
        alice_token=alice.token,
        bob_token=bob.token,
        alice_project_id=str(project.id),
        alice_default_project_id=str(alice.project.id),
        alice_document_id=str(ingested.document.id),
        alice_user_id=str(alice.user.id),
        bob_project_id=str(bob.project.id),
        alice_request_id=str(logged.request.id),
    )


@pytest.fixture(scope="session")
def world(
    server_url: str, template_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    name = f"shortlist_test_isolation_{uuid.uuid4().hex[:12]}"
    db_url = create_database(server_url, name, template=template_database)
    settings = make_settings(
        db_url, tmp_path_factory.mktemp("isolation-data"), server={"run_worker": False}
    )
    try:
        yield asyncio.run(_populate(settings, tmp_path_factory.mktemp("isolation-files")))
    finally:
        drop_database(server_url, name)
