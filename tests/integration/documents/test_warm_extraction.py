"""A worker keeps an extraction process started ahead of time and hands it the next
document; the process serves that one document only."""

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


async def test_the_worker_hands_a_document_to_its_waiting_extraction_process(
    db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(db_url, tmp_path / "data", extraction={"warm_processes": 1})
    async with AsyncTestClient(app=create_app(settings)) as client:
        runtime: Runtime = client.app.state.runtime
        [spare] = await spares_of(runtime, 1)
        alice = await new_user(db_url, "alice")
        uploader = Uploader(client, alice.token)

        created = await uploader.upload(
            alice.project.id, "notes.pdf", make_pdf(["Warm start notes about tidal flats."])
        )
        document: dict[str, Any] = await uploader.wait_settled(created.json()["id"])
        [replacement] = await spares_of(runtime, 1)

    assert document["status"] == "ready", document
    assert not is_running(spare), "the spare read the document, then exited"
    assert replacement != spare
    assert not is_running(replacement), "closing the service stops its spares"
