"""Promise 4, one connection lost mid-request: the answer is 503 database_unavailable, never 500.

The service runs under uvicorn. The test holds a row lock the request's own
statement needs, waits until the request's backend is blocked on it, and
terminates that backend from another connection (``pg_terminate_backend``, as an
operator or a failover would): the connection is lost while the request is
using it, after it was lent from the pool.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx
import psycopg
import pytest

from tests.browser.live_service import run_service
from tests.integration.documents.conftest import Uploader, bearer, new_user

pytestmark = pytest.mark.anyio

#: A request of the app's that waits on a row lock (its connections say application_name=shortlist).
BLOCKED_BACKENDS = """
SELECT pid FROM pg_stat_activity
 WHERE datname = current_database() AND application_name = 'shortlist'
   AND wait_event_type = 'Lock'
"""


async def _terminate_when_blocked(admin: psycopg.AsyncConnection[Any]) -> int:
    """Wait until one of the app's backends waits on a lock, and terminate it."""
    with anyio.fail_after(10):
        while True:
            rows = await (await admin.execute(BLOCKED_BACKENDS)).fetchall()
            if rows:
                break
            await anyio.sleep(0.02)
    for (pid,) in rows:
        await admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
    return len(rows)


async def _lost_mid_request(
    db_url: str, lock: str, key: Any, send: Any
) -> tuple[int, httpx.Response]:
    """Send the request while ``lock`` holds the row it needs, and cut its connection."""
    async with (
        await psycopg.AsyncConnection.connect(db_url, autocommit=True) as locker,
        await psycopg.AsyncConnection.connect(db_url, autocommit=True) as admin,
    ):
        responses: list[httpx.Response] = []

        async def request() -> None:
            responses.append(await send())

        async with locker.transaction(), anyio.create_task_group() as group:
            await locker.execute(lock, (key,))
            group.start_soon(request)
            terminated = await _terminate_when_blocked(admin)
        return terminated, responses[0]


def assert_database_unavailable(response: httpx.Response) -> None:
    assert response.status_code == 503, response.text
    body = response.json()
    assert body["code"] == "database_unavailable"
    assert body["message"]


async def test_a_connection_lost_mid_request_answers_503_on_grants_and_registrations(
    db_url: str, tmp_path: Path
) -> None:
    alice = await new_user(db_url, "alice")
    project = alice.project.id
    with run_service(db_url, tmp_path, server={"run_worker": False}) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
            uploader = Uploader(client, alice.token)

            # POST /api/uploads inserts a grant, which needs a key-share lock on the project row.
            terminated, granted = await _lost_mid_request(
                db_url,
                "SELECT 1 FROM projects WHERE id = %s FOR UPDATE",
                project,
                lambda: uploader.grant(project, "lost.md", b"# x\n", "text/markdown"),
            )
            assert terminated == 1
            assert_database_unavailable(granted)

            # POST /api/documents locks the upload's row before it registers the document.
            grant = (await uploader.grant(project, "kept.md", b"# x\n", "text/markdown")).json()
            assert (await uploader.send(grant, b"# x\n")).status_code in (200, 201)
            terminated, registered = await _lost_mid_request(
                db_url,
                "SELECT 1 FROM uploads WHERE id = %s FOR UPDATE",
                grant["upload_id"],
                lambda: client.post(
                    "/api/documents",
                    json={"project_id": str(project), "upload_id": grant["upload_id"]},
                    headers=bearer(alice.token),
                ),
            )
            assert terminated == 1
            assert_database_unavailable(registered)

            # The pool dropped the dead connections: the same registration now goes through.
            retried = await client.post(
                "/api/documents",
                json={"project_id": str(project), "upload_id": grant["upload_id"]},
                headers=bearer(alice.token),
            )
            assert retried.status_code == 201, retried.text
