"""Deleting a document withdraws the upload grant it came from.

A grant stays valid until it expires, so before this a PUT (local store) or POST (S3)
with the grant of a deleted document put bytes back that no sweep would ever remove.
The local store now refuses the grant; an S3 presigned POST cannot be recalled, so what
it still delivers is swept once the grant has expired.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.runtime import Runtime
from tests.conftest import make_settings
from tests.integration.documents.conftest import (
    Uploader,
    bearer,
    make_pdf,
    new_user,
    sweep_uploads_now,
    without_worker,
)
from tests.integration.documents.test_multipart_uploads import s3_storage
from tests.support.seaweed import SeaweedS3, run_seaweed_s3

pytestmark = pytest.mark.anyio

PDF = make_pdf(["Ice shelves calve icebergs into the sea."])


async def _register(client: Any, token: str, project_id: Any, upload_id: str) -> Any:
    return await client.post(
        "/api/documents",
        json={"project_id": str(project_id), "upload_id": upload_id},
        headers=bearer(token),
    )


async def _expire_long_ago(db_url: str, upload_id: str) -> None:
    async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
        await conn.execute(
            "UPDATE uploads SET expires_at = now() - interval '2 hours' WHERE id = %s",
            (upload_id,),
        )


async def _upload_rows(db_url: str) -> int:
    async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
        row = await (await conn.execute("SELECT count(*) FROM uploads")).fetchone()
    assert row is not None
    return int(row[0])


async def test_the_local_store_refuses_the_grant_of_a_deleted_document(
    app_client_without_worker: Any, db_url: str
) -> None:
    client = app_client_without_worker
    alice = await new_user(db_url, "alice")
    uploader = Uploader(client, alice.token)
    grant = (await uploader.grant(alice.project.id, "shelf.pdf", PDF)).json()
    assert (await uploader.send(grant, PDF)).status_code == 201
    document = (await _register(client, alice.token, alice.project.id, grant["upload_id"])).json()
    deleted = await client.delete(f"/api/documents/{document['id']}", headers=bearer(alice.token))

    again = await uploader.send(grant, PDF)

    runtime: Runtime = client.app.state.runtime
    key = f"projects/{alice.project.id}/uploads/{grant['upload_id']}"
    assert deleted.status_code == 204
    assert again.status_code == 403, again.text
    assert again.json()["code"] == "upload_revoked"
    assert runtime.blobs.head(key) is None
    reregistered = await _register(client, alice.token, alice.project.id, grant["upload_id"])
    assert reregistered.status_code == 409, reregistered.text
    # Once expired, the withdrawn grant is forgotten like any other.
    await _expire_long_ago(db_url, grant["upload_id"])
    assert await sweep_uploads_now(runtime, db_url) == 1
    assert await _upload_rows(db_url) == 0


@pytest.fixture(scope="module")
def seaweed() -> Iterator[SeaweedS3]:
    with run_seaweed_s3("shortlist-revoked") as server:
        yield server


@pytest.fixture
async def s3_client(db_url: str, tmp_path: Path, seaweed: SeaweedS3) -> AsyncIterator[Any]:
    settings = make_settings(db_url, tmp_path / "data", storage=s3_storage(seaweed))
    async with AsyncTestClient(app=create_app(without_worker(settings))) as client:
        yield client


async def _post_form(grant: dict[str, Any], data: bytes) -> httpx.Response:
    async with httpx.AsyncClient(timeout=30) as store:
        files = {"file": ("shelf.pdf", data, grant["fields"].get("Content-Type"))}
        return await store.post(grant["url"], data=grant["fields"], files=files)


async def test_what_an_s3_grant_delivers_after_its_document_was_deleted_is_swept(
    s3_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(s3_client, alice.token)
    grant = (await uploader.grant(alice.project.id, "shelf.pdf", PDF)).json()
    assert grant["method"] == "POST"
    assert (await _post_form(grant, PDF)).status_code in (200, 201, 204)
    created = await _register(s3_client, alice.token, alice.project.id, grant["upload_id"])
    document = created.json()
    deleted = await s3_client.delete(
        f"/api/documents/{document['id']}", headers=bearer(alice.token)
    )
    runtime: Runtime = s3_client.app.state.runtime
    key = f"projects/{alice.project.id}/uploads/{grant['upload_id']}"
    assert deleted.status_code == 204
    assert runtime.blobs.head(key) is None

    # A presigned POST cannot be recalled: the bytes land again...
    assert (await _post_form(grant, PDF)).status_code in (200, 201, 204)
    assert runtime.blobs.head(key) is not None
    # ...and are removed once the grant has expired, with the grant itself.
    await _expire_long_ago(db_url, grant["upload_id"])
    assert await sweep_uploads_now(runtime, db_url) == 1

    assert runtime.blobs.head(key) is None
    assert await _upload_rows(db_url) == 0
