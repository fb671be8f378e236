"""The figures mode of search_documents, through the SDK's own client: a result beside a
figure brings the figure back as a picture (the chart and its caption), named by its result."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from service.runtime import open_runtime
from service.services import users
from service.services.ingest import ingest_file
from service.settings import Settings
from service.storage.db import connection
from tests.integration.mcp.conftest import http_client, live_app, text_of
from tests.support.figure_pdf import CHART_CAPTION, figure_pdf

pytestmark = pytest.mark.anyio


async def test_figures_come_back_as_pictures(settings: Settings, tmp_path: object) -> None:
    from pathlib import Path

    folder = Path(str(tmp_path)) / "files"
    folder.mkdir()
    path = folder / "retreat.pdf"
    path.write_bytes(figure_pdf())
    quiet = settings.model_copy(
        update={"server": settings.server.model_copy(update={"run_worker": False})}
    )
    async with open_runtime(quiet) as runtime:
        async with connection(runtime.pool) as conn:
            alice = await users.create_user(conn, "alice")
        ingested = await ingest_file(runtime, alice.project, path)
        assert ingested.document is not None, ingested.error
    with live_app(quiet) as base_url:
        async with http_client(base_url, alice.token) as client:
            found = await client.call_tool(
                "search_documents", {"query": "glacier retreat by survey station"}
            )
            none = await client.call_tool(
                "search_documents",
                {"query": "glacier retreat by survey station", "images": "none"},
            )
            wrong = await client.call_tool(
                "search_documents", {"query": "glacier", "images": "everything"}
            )
    assert not found.is_error, text_of(found)
    blocks = found.content
    images = [index for index, block in enumerate(blocks) if block.type == "image"]
    assert len(images) == 1
    label = blocks[images[0] - 1]
    assert label.type == "text" and label.text == f"[1] retreat.pdf — p. 1: {CHART_CAPTION}"
    picture = Image.open(io.BytesIO(base64.b64decode(blocks[images[0]].data)))
    assert max(picture.size) <= 1024 and picture.width > picture.height
    assert found.structured_content["results"][0]["figure"]["label"] == "Figure 1"
    assert not [block for block in none.content if block.type == "image"]
    assert wrong.is_error and "images" in text_of(wrong)
