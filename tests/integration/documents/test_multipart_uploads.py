"""Large files bound for S3 go up in parts: one presigned URL per part, a failed part
sent again on its own, the parts joined at registration only when all are there,
and the parts of a grant never registered swept away. Against a real SeaweedFS."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.cli.client import ShortlistClient
from service.errors import ComponentError
from service.runtime import Runtime
from service.settings import Settings
from tests.browser.live_service import run_service
from tests.conftest import make_settings
from tests.integration.documents.conftest import (
    Uploader,
    bearer,
    make_pdf,
    new_user,
    padded_pdf,
    sweep_uploads_now,
    without_worker,
)
from tests.support.fault_proxy import FaultProxy, Seen
from tests.support.seaweed import SeaweedS3, run_seaweed_s3

MB = 1024 * 1024
PART = 5 * MB


@pytest.fixture(scope="module")
def seaweed() -> Iterator[SeaweedS3]:
    with run_seaweed_s3("shortlist-multipart") as server:
        yield server


def s3_storage(s3: SeaweedS3, **overrides: object) -> dict[str, object]:
    """Storage settings for the SeaweedFS server; files over 5 MiB go in 5 MiB parts."""
    return {
        "backend": "s3",
        "s3_endpoint_url": s3.endpoint_url,
        "s3_region": s3.region,
        "s3_bucket": s3.bucket,
        "s3_access_key_id": s3.access_key_id,
        "s3_secret_access_key": s3.secret_access_key,
        "multipart_threshold_bytes": PART,
        "multipart_part_bytes": PART,
        **overrides,
    }


@contextmanager
def service_behind_faults(
    db_url: str, tmp_path: Path, s3: SeaweedS3, *, fail: Callable[[Seen], bool]
) -> Iterator[tuple[FaultProxy, str]]:
    """The whole service on S3, with upload URLs signed for a FaultProxy in front of the
    store; yields (proxy, the service's base URL)."""
    with (
        FaultProxy(s3.endpoint_url, fail=fail) as proxy,
        run_service(
            db_url, tmp_path / "data", storage=s3_storage(s3, s3_public_endpoint_url=proxy.url)
        ) as base_url,
    ):
        yield proxy, base_url


@pytest.fixture
def s3_settings(db_url: str, tmp_path: Path, seaweed: SeaweedS3) -> Settings:
    return make_settings(db_url, tmp_path / "data", storage=s3_storage(seaweed))


@pytest.fixture
async def s3_client(s3_settings: Settings) -> AsyncIterator[Any]:
    async with AsyncTestClient(app=create_app(s3_settings)) as client:
        yield client


@pytest.fixture
async def s3_client_without_worker(s3_settings: Settings) -> AsyncIterator[Any]:
    async with AsyncTestClient(app=create_app(without_worker(s3_settings))) as client:
        yield client


async def register(client: Any, token: str, project_id: Any, upload_id: str) -> Any:
    return await client.post(
        "/api/documents",
        json={"project_id": str(project_id), "upload_id": upload_id},
        headers=bearer(token),
    )


async def send_part(grant: dict[str, Any], number: int, data: bytes) -> httpx.Response:
    part = grant["parts"][number - 1]
    async with httpx.AsyncClient(timeout=30) as store:
        return await store.put(
            part["url"],
            content=data[part["offset"] : part["offset"] + part["size"]],
            headers=grant["headers"],
        )


@pytest.mark.anyio
async def test_a_large_file_goes_up_in_parts_joined_only_when_all_are_there(
    s3_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(s3_client, alice.token)
    data = padded_pdf(12 * MB)

    granted = await uploader.grant(alice.project.id, "survey.pdf", data)
    assert granted.status_code == 201, granted.text
    grant = granted.json()
    assert (grant["method"], grant["url"]) == ("MULTIPART", None)
    assert [(p["number"], p["offset"], p["size"]) for p in grant["parts"]] == [
        (1, 0, PART),
        (2, PART, PART),
        (3, 2 * PART, len(data) - 2 * PART),
    ]

    early = await register(s3_client, alice.token, alice.project.id, grant["upload_id"])
    assert early.status_code == 400
    assert early.json()["code"] == "upload_incomplete"
    assert early.json()["details"]["missing_parts"] == [1, 2, 3]

    for number in (3, 1):
        assert (await send_part(grant, number, data)).status_code == 200
    partial = await register(s3_client, alice.token, alice.project.id, grant["upload_id"])
    assert partial.status_code == 400
    assert partial.json()["details"]["missing_parts"] == [2]
    assert "Parts 2 " in partial.json()["message"]

    assert (await send_part(grant, 2, data)).status_code == 200
    created = await register(s3_client, alice.token, alice.project.id, grant["upload_id"])
    assert created.status_code == 201, created.text
    document = await uploader.wait_settled(created.json()["id"], within=120)
    assert document["status"] == "ready", document
    assert (document["size_bytes"], document["page_count"]) == (len(data), 3)

    link = await s3_client.get(f"/api/documents/{document['id']}/file", headers=uploader.headers)
    assert link.status_code == 200, link.text
    async with httpx.AsyncClient(timeout=30) as store:
        original = await store.get(link.json()["url"])
    assert original.content == data


@pytest.mark.anyio
async def test_a_file_under_the_threshold_still_goes_in_one_presigned_post(
    s3_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    granted = await Uploader(s3_client, alice.token).grant(
        alice.project.id, "small.pdf", make_pdf(["A short page."])
    )

    assert granted.status_code == 201, granted.text
    assert granted.json()["method"] == "POST"
    assert granted.json()["parts"] == []


@pytest.mark.anyio
async def test_a_grant_never_registered_has_its_parts_swept(
    s3_client_without_worker: Any, db_url: str
) -> None:
    s3_client = s3_client_without_worker  # only this test sweeps
    alice = await new_user(db_url, "alice")
    data = padded_pdf(11 * MB)
    grant = (
        await Uploader(s3_client, alice.token).grant(alice.project.id, "gone.pdf", data)
    ).json()
    assert (await send_part(grant, 1, data)).status_code == 200
    await _expire_long_ago(db_url, grant["upload_id"])

    runtime: Runtime = s3_client.app.state.runtime
    assert await sweep_uploads_now(runtime, db_url) == 1

    late_part = await send_part(grant, 2, data)
    assert late_part.status_code == 404
    assert "NoSuchUpload" in late_part.text
    late = await register(s3_client, alice.token, alice.project.id, grant["upload_id"])
    assert (late.status_code, late.json()["code"]) == (404, "upload_not_found")


@pytest.mark.anyio
async def test_a_registered_upload_is_never_swept(s3_client: Any, db_url: str) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(s3_client, alice.token)
    data = padded_pdf(11 * MB)
    grant = (await uploader.grant(alice.project.id, "kept.pdf", data)).json()
    for number in (1, 2, 3):
        await send_part(grant, number, data)
    created = await register(s3_client, alice.token, alice.project.id, grant["upload_id"])
    assert created.status_code == 201, created.text
    await _expire_long_ago(db_url, grant["upload_id"])

    runtime: Runtime = s3_client.app.state.runtime
    assert await sweep_uploads_now(runtime, db_url) == 0

    assert runtime.blobs.head(f"projects/{alice.project.id}/uploads/{grant['upload_id']}")


def test_the_client_sends_a_failed_part_again_and_only_that_part(
    db_url: str, tmp_path: Path, seaweed: SeaweedS3
) -> None:
    alice = asyncio.run(new_user(db_url, "alice"))
    path = tmp_path / "survey.pdf"
    path.write_bytes(padded_pdf(12 * MB))

    def first_try_of_part_2(seen: Seen) -> bool:
        return seen.method == "PUT" and "partNumber=2&" in seen.target and seen.attempt == 1

    with (
        service_behind_faults(db_url, tmp_path, seaweed, fail=first_try_of_part_2) as (
            proxy,
            base_url,
        ),
        ShortlistClient(base_url, alice.token, retry_wait=0.05) as client,
    ):
        progress: list[int] = []
        document = client.upload(str(alice.project.id), path, on_progress=progress.append)
        settled = client.wait(document["id"], timeout=120, interval=0.25)

    assert [proxy.attempts("PUT", f"partNumber={n}&") for n in (1, 2, 3)] == [1, 2, 1]
    assert any(step < 0 for step in progress), "the failed part's bytes are taken back"
    assert sum(progress) == path.stat().st_size
    assert settled["status"] == "ready", settled


def test_a_part_that_keeps_failing_fails_the_upload_and_nothing_more_is_sent(
    db_url: str, tmp_path: Path, seaweed: SeaweedS3
) -> None:
    alice = asyncio.run(new_user(db_url, "alice"))
    path = tmp_path / "survey.pdf"
    path.write_bytes(padded_pdf(11 * MB))

    def every_try_of_part_1(seen: Seen) -> bool:
        return "partNumber=1&" in seen.target

    with (
        service_behind_faults(db_url, tmp_path, seaweed, fail=every_try_of_part_1) as (
            proxy,
            base_url,
        ),
        ShortlistClient(
            base_url, alice.token, retry_wait=0.05, part_attempts=3, part_concurrency=1
        ) as client,
    ):
        with pytest.raises(ComponentError) as raised:
            client.upload(str(alice.project.id), path)
        listed = client.http.get(f"/api/projects/{alice.project.id}/documents").json()

    assert raised.value.code == "upload_part_failed"
    assert "Part 1 failed 3 times" in raised.value.message
    assert [proxy.attempts("PUT", f"partNumber={n}&") for n in (1, 2, 3)] == [3, 0, 0]
    assert listed["documents"] == []


def test_shortlist_upload_sends_a_49_mb_pdf_to_s3_in_default_parts(
    db_url: str, tmp_path: Path, seaweed: SeaweedS3
) -> None:
    alice = asyncio.run(new_user(db_url, "alice"))
    path = tmp_path / "big.pdf"
    path.write_bytes(padded_pdf(49 * MB))
    storage = s3_storage(seaweed)
    del storage["multipart_threshold_bytes"], storage["multipart_part_bytes"]

    with run_service(db_url, tmp_path / "data", storage=storage) as base_url:
        probe = httpx.post(
            f"{base_url}/api/uploads",
            json={
                "project_id": str(alice.project.id),
                "filename": "probe.pdf",
                "content_type": "application/pdf",
                "size": path.stat().st_size,
            },
            headers=bearer(alice.token),
        ).json()
        uploaded = subprocess.run(
            [sys.executable, "-m", "service.cli", "upload", str(path), "--url", base_url, "--json"],
            env={**os.environ, "DATABASE_URL": db_url, "SHORTLIST_TOKEN": alice.token},
            capture_output=True,
            text=True,
            timeout=280,
            check=False,
        )

    assert probe["method"] == "MULTIPART"
    assert len(probe["parts"]) == 7  # 8 MiB parts by default
    assert uploaded.returncode == 0, uploaded.stderr
    [entry] = json.loads(uploaded.stdout)
    assert entry["status"] == "ready", entry
    assert entry["document"]["name"] == "big.pdf"
    assert "big.pdf" in uploaded.stderr, "the progress bar is drawn on stderr"


async def _expire_long_ago(db_url: str, upload_id: str) -> None:
    """Move a grant's expiry two hours back, past the sweep's one-hour grace."""
    async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
        await conn.execute(
            "UPDATE uploads SET expires_at = now() - interval '2 hours' WHERE id = %s",
            (upload_id,),
        )
