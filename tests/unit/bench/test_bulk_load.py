"""The bench-only bulk loader writes the rows the product's own backfill writes (#28)."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg.rows import dict_row

from bench.bulk_load import bulk_load
from retrieval.types import SourceDocument
from service.runtime import open_runtime
from service.services import prefilter, users
from tests.conftest import make_settings

pytestmark = pytest.mark.anyio

DOCUMENTS = [
    SourceDocument(
        f"d{n}",
        f"Report {n}.md",
        f"hash-{n}",
        f"<!-- page 1 -->\n# Quokka survey {n}\n\nQuokkas smile at zymurgists, {n} times."
        f"\n\n<!-- page 2 -->\n## Methods\n\n" + "Counting quokkas at dawn and dusk. " * 60,
    )
    for n in range(5)
]


def _rows(
    url: str, project_id: UUID
) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """The project's stored terms, by document name (ids differ between the two loads), its
    terms' document frequencies and its coverage sums."""
    with psycopg.connect(url, row_factory=dict_row) as conn:
        documents = conn.execute(
            "SELECT d.name, l.content_hash, l.config, l.language, l.passages, l.terms,"
            " ARRAY(SELECT t FROM unnest(l.vocabulary) t ORDER BY t) AS vocabulary,"
            " l.written_language, l.passage_layout"
            " FROM lexical_documents l JOIN documents d ON d.id = l.document_id"
            " WHERE l.project_id = %s ORDER BY d.name",
            (project_id,),
        ).fetchall()
        postings = conn.execute(
            "SELECT d.name, p.term, p.passage, p.tf, p.length FROM lexical_postings p"
            " JOIN documents d ON d.id = p.document_id WHERE p.project_id = %s"
            " ORDER BY d.name, p.passage, p.term",
            (project_id,),
        ).fetchall()
        frequencies = conn.execute(
            "SELECT term, passages FROM lexical_terms WHERE project_id = %s ORDER BY term",
            (project_id,),
        ).fetchall()
        frequencies += conn.execute(
            "SELECT config, language, documents, passages, terms FROM lexical_project_stats"
            " WHERE project_id = %s",
            (project_id,),
        ).fetchall()
    return (
        [tuple(row.values()) for row in documents],
        [tuple(row.values()) for row in postings],
        [tuple(row.values()) for row in frequencies],
    )


async def test_the_bulk_loader_writes_what_the_backfill_writes(db_url: str, tmp_path: Path) -> None:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        by_product = await users.create_user(conn, "product")  # type: ignore[arg-type]
        by_loader = await users.create_user(conn, "loader")  # type: ignore[arg-type]
        for document in DOCUMENTS:
            await conn.execute(
                "INSERT INTO documents (project_id, name, content_type, size_bytes, status,"
                " markdown, content_hash, kind, page_count, extracted_at)"
                " VALUES (%s, %s, 'text/markdown', 1, 'ready', %s, %s, 'text', 2, now())",
                (by_product.project.id, document.name, document.markdown, document.content_hash),
            )
    settings = make_settings(db_url, tmp_path, server={"run_worker": False})
    async with open_runtime(settings, background=False) as runtime:
        while await prefilter.backfill(runtime):
            pass
        loaded = bulk_load(
            db_url, by_loader.project.id, DOCUMENTS, runtime.search.index, suffix=False
        )
    expected = _rows(db_url, by_product.project.id)
    assert all(row[-1] for row in expected[0]), "the backfill stored no layout"
    assert expected[1], "the backfill stored no postings"
    assert expected[2], "the backfill counted no terms"
    assert _rows(db_url, by_loader.project.id) == expected
    assert loaded.documents == len(DOCUMENTS)
    assert loaded.passages == sum(row[4] for row in expected[0])
    with psycopg.connect(db_url) as conn:  # the primary key and the index are back
        indexes = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'lexical_postings' ORDER BY 1"
        ).fetchall()
    assert indexes == [
        ("lexical_postings_impact_idx",),
        ("lexical_postings_pkey",),
    ]
