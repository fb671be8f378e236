"""Issue #24, item 9: no pooled connection is held across a DNS lookup or a blob write.

A URL import resolves its host before anything is stored; an import, a request approval
(REST) and the MCP tool ``import_url`` did so on the request's connection, and ``shortlist
ingest`` (and MCP ``add_document``, folder sync) wrote the original to the blob store on one.
With the pool at one connection and a lookup or a write held open by the test, another
user's request must still get that connection: a starved one is ``503`` after the pool
timeout (``database.pool_timeout``, 2 s here), so nothing is timed by the wall clock.

The slow parts are real: the system's resolver that answers once the test lets it (a slow
DNS server), and the local blob store writing its files once the test lets it (a slow disk).
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import pytest

from service.runtime import open_runtime
from service.services import documents, text_documents, users
from service.services.ingest import ingest_file
from service.services.url_addresses import IPAddress
from service.services.url_fetch import system_resolver
from service.storage.blobs import LocalBlobStore
from service.storage.db import connection
from tests.conftest import make_settings
from tests.integration.documents.conftest import bearer, new_user
from tests.integration.mcp.conftest import http_client, live_app

pytestmark = pytest.mark.anyio

ONE_CONNECTION = {"pool_min_size": 1, "pool_max_size": 1, "pool_timeout": 2.0}
HELD_SECONDS = 30.0
"""The longest the test holds a lookup or a write (it lets go as soon as it has checked)."""


class SlowResolver:
    """The system's resolver, answering each lookup only once the test lets it."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.answer = threading.Event()

    def __call__(self, host: str, port: int) -> list[IPAddress]:
        self.asked.set()
        self.answer.wait(HELD_SECONDS)
        return system_resolver("127.0.0.1", port)  # every name is this machine


class SlowLocalStore(LocalBlobStore):
    """The local blob store, writing or deleting each original only once the test lets it."""

    writing: threading.Event
    proceed: threading.Event

    def write(self, key: str, data: bytes, content_type: str) -> None:
        self.writing.set()
        self.proceed.wait(HELD_SECONDS)
        super().write(key, data, content_type)

    def delete(self, key: str) -> None:
        self.writing.set()
        self.proceed.wait(HELD_SECONDS)
        super().delete(key)


async def _wait_for(event: threading.Event) -> None:
    assert await anyio.to_thread.run_sync(event.wait, HELD_SECONDS), "the slow part never began"


Door = Callable[[str, Any], Awaitable[str]]
"""Import a document by one door; "accepted", else what was answered."""


def _accepted(answer: httpx.Response) -> str:
    return "accepted" if answer.status_code == 202 else f"{answer.status_code} {answer.text}"


async def _rest_import(base_url: str, alice: Any) -> str:
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        answer = await client.post(
            f"/api/projects/{alice.project.id}/imports",
            json={"url": "http://docs.example:9/notes.md"},
            headers=bearer(alice.token),
        )
    return _accepted(answer)


async def _rest_approval(base_url: str, alice: Any) -> str:
    async with http_client(base_url, alice.token) as mcp:
        logged = await mcp.call_tool("request_document", {"title": "Tide tables"})
    request_id = logged.structured_content["request"]["id"]
    async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
        answer = await client.post(
            f"/api/projects/{alice.project.id}/requests/{request_id}/approve",
            json={"url": "http://docs.example:9/tides.md"},
            headers=bearer(alice.token),
        )
    return _accepted(answer)


async def _mcp_import(base_url: str, alice: Any) -> str:
    async with http_client(base_url, alice.token) as mcp:
        result = await mcp.call_tool("import_url", {"url": "http://docs.example:9/notes.md"})
    return "accepted" if not result.is_error else str(result.content)


@pytest.mark.parametrize(
    "door", [_rest_import, _rest_approval, _mcp_import], ids=["rest", "approval", "mcp"]
)
async def test_a_slow_dns_lookup_of_an_import_holds_no_connection(
    db_url: str, tmp_path: Path, door: Door
) -> None:
    settings = make_settings(
        db_url,
        tmp_path,
        database=ONE_CONNECTION,
        fetch={"allow_http": True, "allow_private_networks": True},
        server={"run_worker": False},
    )
    alice = await new_user(db_url, "alice")
    bob = await new_user(db_url, "bob")
    resolver = SlowResolver()
    with live_app(settings, resolve=resolver) as base_url:
        outcome: list[str] = []
        async with anyio.create_task_group() as tasks:

            async def importing() -> None:
                outcome.append(await door(base_url, alice))

            tasks.start_soon(importing)
            try:
                await _wait_for(resolver.asked)
                async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
                    listed = await client.get("/api/projects", headers=bearer(bob.token))
            finally:
                resolver.answer.set()
    assert (listed.status_code, listed.json().get("code")) == (200, None), listed.text
    assert outcome == ["accepted"]


async def test_a_slow_blob_write_or_delete_holds_no_connection(db_url: str, tmp_path: Path) -> None:
    """``shortlist ingest`` and MCP ``add_document`` store the original, then insert;
    deleting a document (REST ``DELETE``, the CLI, sync) removes the row, then the file."""
    settings = make_settings(db_url, tmp_path, database=ONE_CONNECTION)
    store = SlowLocalStore(
        tmp_path / "blobs",
        public_base_url="http://127.0.0.1:9",
        signing_secret="a test signing secret",
    )
    store.writing, store.proceed = threading.Event(), threading.Event()
    alice = await new_user(db_url, "alice")
    notes = tmp_path / "notes.md"
    notes.write_text("# Moraines\n\nWhere a glacier once stood.\n")
    async with open_runtime(settings, blobs=store, background=False) as runtime:
        async with connection(runtime.pool) as conn:
            principal = await users.authenticate(conn, alice.token)
        for name, storing in (
            ("ingest", lambda: ingest_file(runtime, alice.project, notes)),
            (
                "add_document",
                lambda: text_documents.add_text_document(
                    runtime,
                    principal,
                    project_id=alice.project.id,
                    name="tides.md",
                    content="# Tides\n\nHigh water at noon.\n",
                ),
            ),
        ):
            store.writing.clear()
            store.proceed.clear()
            stored: list[Any] = []
            async with anyio.create_task_group() as tasks:

                async def store_it() -> None:
                    stored.append(await storing())  # noqa: B023 (awaited within the loop)

                tasks.start_soon(store_it)
                try:
                    await _wait_for(store.writing)
                    async with connection(runtime.pool) as conn:  # within the pool timeout
                        await conn.execute("SELECT 1")
                finally:
                    store.proceed.set()
            assert stored, name
        document = stored[0].document
        assert document is not None
        store.writing.clear()
        store.proceed.clear()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(documents.delete_document, runtime, principal, document.id)
            try:
                await _wait_for(store.writing)
                async with connection(runtime.pool) as conn:  # within the pool timeout
                    await conn.execute("SELECT 1")
            finally:
                store.proceed.set()
        assert not store.path_for(document.object_key).exists()
