"""Promise 4, blob store half: with the store down, grants fail with a clear 503 and health
says so; an extraction that meets the outage is retried and completes when the store returns.

The service runs on its S3 backend against a real SeaweedFS (tests/support/seaweed.py)
reached through a TCP proxy the test cuts and restores, so the same server and
data come back. The extraction runs in a separate worker runtime, started only
once the store is down, exactly like a ``shortlist worker`` process.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.runtime import open_runtime
from service.settings import Settings
from tests.conftest import make_settings
from tests.integration.documents.conftest import Uploader, new_user
from tests.support.seaweed import SeaweedS3, run_seaweed_s3
from tests.support.tcp_proxy import TcpProxy

pytestmark = pytest.mark.anyio

#: Enough attempts that the job outlives the outage: procrastinate waits 2, 4, 8… s between them.
MAX_ATTEMPTS = 5
#: A refused grant must come back within this many seconds (boto3's own retries included).
GRANT_BOUND = 5.0
TEXT = b"# Tides\n\nThe moon pulls the oceans into two bulges; the earth turns beneath them.\n"


@pytest.fixture(scope="module")
def seaweed() -> Iterator[SeaweedS3]:
    with run_seaweed_s3() as s3:
        yield s3


@pytest.fixture
def store_proxy(seaweed: SeaweedS3) -> Iterator[TcpProxy]:
    endpoint = urlsplit(seaweed.endpoint_url)
    proxy = TcpProxy(str(endpoint.hostname), int(endpoint.port or 80))
    proxy.start()
    try:
        yield proxy
    finally:
        proxy.stop()


def s3_settings(db_url: str, data_dir: Path, seaweed: SeaweedS3, proxy: TcpProxy) -> Settings:
    return make_settings(
        db_url,
        data_dir,
        server={"run_worker": False},
        storage={
            "backend": "s3",
            "s3_endpoint_url": f"http://127.0.0.1:{proxy.port}",
            "s3_bucket": seaweed.bucket,
            "s3_region": seaweed.region,
            "s3_access_key_id": seaweed.access_key_id,
            "s3_secret_access_key": seaweed.secret_access_key,
        },
        jobs={"max_attempts": MAX_ATTEMPTS},
    )


async def upload_to_store(grant: dict[str, Any], name: str, data: bytes) -> None:
    """Send the file as a browser would: a presigned POST straight to the store."""
    assert grant["method"] == "POST"
    async with httpx.AsyncClient(timeout=10) as store:
        sent = await store.post(
            grant["url"],
            data=grant["fields"],
            files={"file": (name, data, grant["fields"]["Content-Type"])},
        )
    assert sent.status_code in (200, 201, 204), sent.text


def attempts_of(db_url: str, document_id: str) -> tuple[str, int]:
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT status, attempts FROM documents WHERE id = %s", (document_id,)
        ).fetchone()
    assert row is not None
    return str(row[0]), int(row[1])


async def wait_until(predicate: Any, within: float) -> bool:
    deadline = time.monotonic() + within
    while not predicate():
        if time.monotonic() > deadline:
            return False
        await anyio.sleep(0.2)
    return True


async def test_grants_fail_with_a_clear_503_and_health_reports_the_store_while_it_is_down(
    db_url: str, tmp_path: Path, seaweed: SeaweedS3, store_proxy: TcpProxy
) -> None:
    alice = await new_user(db_url, "alice")
    settings = s3_settings(db_url, tmp_path, seaweed, store_proxy)
    async with AsyncTestClient(app=create_app(settings)) as client:
        uploader = Uploader(client, alice.token)
        assert (await client.get("/api/health")).json()["blob_store"]["ok"] is True

        store_proxy.stop()
        health = await client.get("/api/health")
        assert health.status_code == 200  # the database answers; the service is degraded
        assert health.json()["status"] == "degraded"
        assert health.json()["blob_store"]["ok"] is False
        started = time.monotonic()
        refused = await uploader.grant(alice.project.id, "tides.md", TEXT, "text/markdown")
        elapsed = time.monotonic() - started
        assert refused.status_code == 503, refused.text
        assert refused.json()["code"] == "blob_store_unavailable"
        assert "cannot be reached" in refused.json()["message"]
        assert elapsed < GRANT_BOUND

        store_proxy.start()
        assert (await client.get("/api/health")).json()["status"] == "ok"
        granted = await uploader.grant(alice.project.id, "tides.md", TEXT, "text/markdown")
        assert granted.status_code == 201, granted.text


async def test_an_extraction_that_meets_a_store_outage_is_retried_and_completes_after_it(
    db_url: str, tmp_path: Path, seaweed: SeaweedS3, store_proxy: TcpProxy
) -> None:
    alice = await new_user(db_url, "alice")
    settings = s3_settings(db_url, tmp_path, seaweed, store_proxy)
    async with AsyncTestClient(app=create_app(settings)) as client:
        uploader = Uploader(client, alice.token)
        granted = await uploader.grant(alice.project.id, "tides.md", TEXT, "text/markdown")
        assert granted.status_code == 201, granted.text
        await upload_to_store(granted.json(), "tides.md", TEXT)
        created = await client.post(
            "/api/documents",
            json={"project_id": str(alice.project.id), "upload_id": granted.json()["upload_id"]},
            headers=uploader.headers,
        )
        assert created.status_code == 201, created.text
        document_id = created.json()["id"]

        store_proxy.stop()
        async with open_runtime(settings) as worker_runtime:
            worker = asyncio.create_task(
                worker_runtime.jobs.run_worker_forever(worker_runtime, name="outage-worker")
            )
            try:
                failed_twice = await wait_until(
                    lambda: attempts_of(db_url, document_id)[1] >= 2, within=30
                )
                assert failed_twice, attempts_of(db_url, document_id)
                assert attempts_of(db_url, document_id)[0] == "processing"

                store_proxy.start()
                settled = await uploader.wait_settled(document_id, within=40)
            finally:
                worker.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await worker

        assert settled["status"] == "ready", settled
        status, attempts = attempts_of(db_url, document_id)
        # At least one attempt met the outage; a later one (maybe the one running when the
        # store came back) succeeded.
        assert (status, attempts >= 2) == ("ready", True)
        assert attempts <= MAX_ATTEMPTS
        read = await client.get(f"/api/documents/{document_id}/text", headers=uploader.headers)
        assert read.status_code == 200, read.text
        assert "moon pulls the oceans" in read.text
