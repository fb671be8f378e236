"""Promise 4, database half: during an outage requests fail fast with 503 JSON, and the same
app recovers by itself; no document is left half-written; the worker comes back.

The service runs under uvicorn (real HTTP, truly concurrent requests) and
reaches PostgreSQL through a TCP proxy (tests/support/tcp_proxy.py) the test
cuts — every open connection is dropped and new ones are refused — and then
restores on the same port.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from tests.browser.live_service import run_service
from tests.integration.documents.conftest import Uploader, bearer, new_user
from tests.integration.test_health import _through_proxy, _wait_for_status
from tests.reliability.faults.seeding import DOCUMENTS, QUERY, document_states, upload_markdown

pytestmark = pytest.mark.anyio

POOL_TIMEOUT = 1.0
#: A request during the outage must end within the pool timeout plus this (a bound, not a target).
SLACK = 2.0
OUTAGE_SECONDS = 3.0
#: Seconds from the database's return to a healthy answer (a bound, not a target).
RECOVERY_BOUND = 8.0
STATUSES = {"pending", "processing", "ready", "error"}


async def _search(client: Any, token: str, project_id: Any) -> tuple[float, Any]:
    started = time.monotonic()
    response = await client.post(
        f"/api/projects/{project_id}/search", json={"query": QUERY}, headers=bearer(token)
    )
    return time.monotonic() - started, response


async def _grant(client: Any, token: str, project_id: Any, name: str) -> tuple[float, Any]:
    started = time.monotonic()
    response = await Uploader(client, token).grant(project_id, name, b"# x\n", "text/markdown")
    return time.monotonic() - started, response


async def test_a_database_outage_gives_fast_503s_and_the_same_app_recovers_without_restart(
    db_url: str, tmp_path: Path
) -> None:
    proxy, proxied_url = _through_proxy(db_url)
    proxy.start()
    alice = await new_user(db_url, "alice")
    token, project = alice.token, alice.project.id
    service = run_service(
        proxied_url,
        tmp_path,
        database={"pool_timeout": POOL_TIMEOUT, "connect_timeout": 1},
        server={"search_rate_per_minute": 0, "upload_rate_per_minute": 0},
    )
    try:
        with service as base_url:
            async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
                seeded = await upload_markdown(
                    client, token, project, dict(list(DOCUMENTS.items())[:1])
                )
                assert {document["status"] for document in seeded} == {"ready"}

                # Registered just before the cut: its extraction straddles the outage.
                uploader = Uploader(client, token)
                straddling = await uploader.upload(
                    project, "straddling.md", b"# Late\n\nLate light."
                )
                assert straddling.status_code == 201, straddling.text

                proxy.stop()
                outage: list[tuple[str, float, Any]] = []

                async def hammer(kind: str, index: int) -> None:
                    ends = time.monotonic() + OUTAGE_SECONDS
                    count = 0
                    while time.monotonic() < ends:
                        count += 1
                        if kind == "search":
                            elapsed, response = await _search(client, token, project)
                        else:
                            elapsed, response = await _grant(
                                client, token, project, f"during-{index}-{count}.md"
                            )
                        outage.append((kind, elapsed, response))

                async with anyio.create_task_group() as group:
                    for index in range(3):
                        group.start_soon(hammer, "search", index)
                        group.start_soon(hammer, "grant", index)

                assert {kind for kind, _, _ in outage} == {"search", "grant"}
                for kind, elapsed, response in outage:
                    assert response.status_code == 503, (
                        f"{kind}: {response.status_code} {response.text}"
                    )
                    assert response.json()["code"] == "database_unavailable"
                    assert response.json()["message"]
                    assert elapsed < POOL_TIMEOUT + SLACK, f"{kind} took {elapsed:.2f} s"

                proxy.start()
                restored = time.monotonic()
                assert (await _wait_for_status(client, 200)).status_code == 200
                # psycopg's reconnect backoff is bounded (service.storage.db.RECONNECT_WINDOW_SECONDS).
                assert time.monotonic() - restored < RECOVERY_BOUND
                _, found = await _search(client, token, project)
                assert found.status_code == 200, found.text
                assert found.json()["results"]
                granted = (await _grant(client, token, project, "after.md"))[1]
                assert granted.status_code == 201, granted.text

                settled = await uploader.wait_settled(straddling.json()["id"], within=60)
                assert settled["status"] in ("ready", "error"), settled

                # The in-process worker came back: a new upload is extracted.
                fresh = await uploader.upload(project, "fresh.md", b"# Fresh\n\nFresh light.")
                assert fresh.status_code == 201, fresh.text
                assert (await uploader.wait_settled(fresh.json()["id"], within=60))[
                    "status"
                ] == "ready"
    finally:
        proxy.stop()

    for name, status, has_markdown, has_hash in document_states(db_url):
        assert status in STATUSES, name
        assert status != "ready" or (has_markdown and has_hash), name
        assert status in ("ready", "error"), f"{name} was left {status}"
