"""A worker keeps extraction processes started ahead of time and hands them documents;
a process serves several, and a long PDF's view shows its pages read so far."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.runtime import Runtime
from tests.conftest import make_settings
from tests.integration.documents.conftest import Uploader, make_pdf, new_user
from tests.support.procfs import is_running

pytestmark = pytest.mark.anyio


async def spares_of(runtime: Runtime, count: int, within: float = 30.0) -> list[int]:
    import anyio

    deadline = time.monotonic() + within
    while len(pids := runtime.sandboxes.spare_pids()) < count:
        assert time.monotonic() < deadline, "no spare extraction process started"
        await anyio.sleep(0.05)
    return pids


async def test_the_worker_hands_documents_to_its_waiting_extraction_process(
    db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(
        db_url, tmp_path / "data", extraction={"warm_processes": 1, "workers": 1}
    )
    async with AsyncTestClient(app=create_app(settings)) as client:
        runtime: Runtime = client.app.state.runtime
        [spare] = await spares_of(runtime, 1)
        alice = await new_user(db_url, "alice")
        uploader = Uploader(client, alice.token)

        documents: list[dict[str, Any]] = []
        for name in ("notes.pdf", "more-notes.pdf"):
            created = await uploader.upload(
                alice.project.id, name, make_pdf([f"Warm start {name} about tidal flats."])
            )
            documents.append(await uploader.wait_settled(created.json()["id"]))
        after = await spares_of(runtime, 1)

    assert [document["status"] for document in documents] == ["ready", "ready"], documents
    assert after == [spare], "the same process read both documents and waits for more"
    assert not is_running(spare), "closing the service stops its spares"


async def test_a_long_pdf_being_extracted_shows_its_pages_done(db_url: str, tmp_path: Path) -> None:
    import anyio

    pages = 40
    settings = make_settings(
        db_url,
        tmp_path / "data",
        extraction={"workers": 1, "split_min_pages": 2, "pages_per_part": 2},
    )
    async with AsyncTestClient(app=create_app(settings)) as client:
        alice = await new_user(db_url, "alice")
        uploader = Uploader(client, alice.token)
        text = [f"Page {n} of the survey of tidal flats and their birds." for n in range(pages)]
        created = await uploader.upload(alice.project.id, "survey.pdf", make_pdf(text))
        seen: list[dict[str, int]] = []
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            body = (
                await client.get(f"/api/documents/{created.json()['id']}", headers=uploader.headers)
            ).json()
            if body["progress"] is not None:
                seen.append(body["progress"])
            if body["status"] in ("ready", "error"):
                break
            await anyio.sleep(0.02)

    assert body["status"] == "ready" and body["page_count"] == pages, body
    assert body["progress"] is None, "a settled document has no progress"
    assert seen, "the view showed progress while the document was extracted"
    assert {progress["page_count"] for progress in seen} == {pages}
    done = [progress["pages_done"] for progress in seen]
    assert done == sorted(done) and 0 < done[0] <= pages
