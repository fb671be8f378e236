"""Promise 2 for extracted text: NUL characters some PDFs carry do not make a document fail.

Two corpus PDFs (``long_100plus/mupdf_explored.pdf``, ``GeoTopo-komprimiert.pdf``)
extract to text holding NUL, which PostgreSQL refuses; they used to end as
``extraction_failed`` after three attempts. This pins the fix without the
minutes their extraction takes: the same kind of text goes through the same save.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest
from psycopg.rows import dict_row

from extract import Extraction
from service.runtime import open_runtime
from service.services import users
from service.services.extraction import claim, save_extraction
from service.services.ingest import ingest_file
from service.settings import Settings
from sql import queries

pytestmark = pytest.mark.anyio


async def test_extracted_text_with_nul_is_stored_and_the_document_is_ready(
    settings: Settings, db_url: str, tmp_path: Path
) -> None:
    source = tmp_path / "plain.md"
    source.write_text("# Plain\n\nplaceholder\n")
    async with (
        open_runtime(settings) as runtime,
        await psycopg.AsyncConnection.connect(
            db_url, autocommit=True, row_factory=dict_row
        ) as conn,
    ):
        owner = await users.create_user(conn, "nul")
        ingested = await ingest_file(runtime, owner.project, source)
        assert ingested.document is not None
        # Back to pending, then claimed, as the worker does before it saves.
        await conn.execute(
            queries["reset_document_for_extraction"],
            {"document_id": ingested.document.id, "user_id": owner.user.id},
        )
        assert await claim(conn, ingested.document.id) is not None
        markdown = "<!-- page 1 -->\nbefore\x00after\n"
        saved = await save_extraction(
            conn,
            ingested.document.id,
            Extraction(markdown=markdown, page_count=1, page_offsets=(0,), kind="pdf"),
        )
        row = await (
            await conn.execute(
                "SELECT status, markdown FROM documents WHERE id = %s", (ingested.document.id,)
            )
        ).fetchone()

    assert saved
    assert row is not None
    assert row["status"] == "ready"
    assert row["markdown"] == "<!-- page 1 -->\nbefore\ufffdafter\n"
