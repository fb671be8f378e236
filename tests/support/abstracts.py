"""Documents written straight into a project as ready Markdown (no extraction): SciFact
abstracts, or any page-marked Markdown."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

import psycopg

from tests.support.paths import SCIFACT_DIR


def add_ready_abstracts(db_url: str, project_id: object, count: int) -> None:
    """The first ``count`` SciFact abstracts as ready one-page documents of the project."""
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for _, line in zip(range(count), lines, strict=False)]
    add_ready_markdown(
        db_url,
        project_id,
        [
            (f"{row['_id']}.md", f"<!-- page 1 -->\n# {row['title']}\n\n{row['text']}\n")
            for row in rows
        ],
    )


def add_ready_markdown(
    db_url: str, project_id: object, documents: Sequence[tuple[str, str]]
) -> None:
    """``(name, page-marked Markdown)`` pairs as ready documents of the project."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        for name, markdown in documents:
            conn.execute(
                "INSERT INTO documents (project_id, name, content_type, size_bytes, status,"
                " markdown, content_hash, kind, page_count, extracted_at)"
                " VALUES (%s, %s, 'text/markdown', %s, 'ready', %s, %s, 'text', %s, now())",
                (
                    project_id,
                    name,
                    len(markdown),
                    markdown,
                    hashlib.sha256(markdown.encode()).hexdigest(),
                    max(1, markdown.count("<!-- page ")),
                ),
            )
