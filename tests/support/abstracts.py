"""SciFact abstracts written straight into a project as ready documents (no extraction)."""

from __future__ import annotations

import hashlib
import json

import psycopg

from tests.support.paths import SCIFACT_DIR


def add_ready_abstracts(db_url: str, project_id: object, count: int) -> None:
    """The first ``count`` SciFact abstracts as ready one-page documents of the project."""
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for _, line in zip(range(count), lines, strict=False)]
    with psycopg.connect(db_url, autocommit=True) as conn:
        for row in rows:
            markdown = f"<!-- page 1 -->\n# {row['title']}\n\n{row['text']}\n"
            conn.execute(
                "INSERT INTO documents (project_id, name, content_type, size_bytes, status,"
                " markdown, content_hash, kind, page_count, extracted_at)"
                " VALUES (%s, %s, 'text/markdown', %s, 'ready', %s, %s, 'text', 1, now())",
                (
                    project_id,
                    f"{row['_id']}.md",
                    len(markdown),
                    markdown,
                    hashlib.sha256(markdown.encode()).hexdigest(),
                ),
            )
