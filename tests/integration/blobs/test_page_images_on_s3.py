"""Page images read the original from S3 as they do from the local store: a PDF stored in a
real SeaweedFS bucket is drawn, with a passage marked on it."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from service.runtime import open_runtime
from service.services import page_images, users
from service.services.ingest import ingest_file
from service.storage.db import connection
from tests.conftest import make_settings
from tests.support.seaweed import SeaweedS3

pytestmark = pytest.mark.anyio

TEXT = "The harbour pilots log every ferry that leaves the island before the tide turns."


async def test_a_page_of_an_original_on_s3_is_drawn_and_marked(
    db_url: str, tmp_path: Path, seaweed_s3: SeaweedS3
) -> None:
    settings = make_settings(
        db_url,
        tmp_path / "data",
        server={"run_worker": False},
        storage={
            "backend": "s3",
            "s3_endpoint_url": seaweed_s3.endpoint_url,
            "s3_region": seaweed_s3.region,
            "s3_bucket": seaweed_s3.bucket,
            "s3_access_key_id": seaweed_s3.access_key_id,
            "s3_secret_access_key": seaweed_s3.secret_access_key,
            "s3_addressing_style": "path",
        },
    )
    doc = pymupdf.open()
    doc.new_page().insert_textbox(pymupdf.Rect(72, 100, 540, 300), TEXT, fontsize=12)
    path = tmp_path / "pilots.pdf"
    doc.save(path)
    async with open_runtime(settings, background=False) as runtime:
        assert runtime.settings.storage_backend == "s3"
        async with connection(runtime.pool) as conn:
            alice = await users.create_user(conn, "alice")
            principal = await users.authenticate(conn, alice.token)
        ingested = await ingest_file(runtime, alice.project, path)
        assert ingested.document is not None, ingested.error
        drawn = await page_images.page_image(
            runtime,
            principal,
            ingested.document.id,
            1,
            passage=f"{ingested.document.id}:0",
            crop=True,
        )
    assert drawn.png.startswith(b"\x89PNG")
    assert drawn.covered == 1.0 and drawn.cropped
