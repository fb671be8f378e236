"""A bench-only bulk loader for large prefilter projects (#28): documents and their passage
terms written with COPY, in the shape the product writes them.

Ingesting 250,000 documents through the product (extraction, then
:func:`service.services.prefilter.store_terms` one document per transaction) takes hours on
two shared cores, mostly in maintaining ``lexical_postings``' primary key one random insert at
a time. This loader writes the very same rows faster, for benchmarks only:

* ``documents``: ready, with the given Markdown and content hash (no extraction, no blob);
* ``lexical_documents``: what :func:`~service.services.prefilter.store_terms` records
  (configuration, stemming and written language, passage and term counts, the distinct
  terms, the chunks' layout);
* ``lexical_postings``: :func:`service.services.prefilter.postings_copy_text`'s rows, made from the
  product's own :meth:`retrieval.ChunkIndex.passage_terms`;

with ``lexical_postings``' indexes dropped while the rows stream in and built again after
(the same definitions, read from the catalog), then ``VACUUM ANALYZE``. Its speed is the
speed of a bulk load, not of the product's ingest: ``bench/prefilter.py`` reports the two
separately. ``tests/unit/bench/test_bulk_load.py`` checks it writes what the product writes.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import NamedTuple
from uuid import UUID, uuid4

import psycopg

from extract.page_markers import find_page_markers
from retrieval import ChunkIndex
from retrieval.types import SourceDocument
from service.services.prefilter import layout_json, postings_copy_text, vocabulary
from sql import queries

BATCH = 2000
"""Documents tokenised and written per COPY round."""


class Loaded(NamedTuple):
    documents: int
    passages: int
    seconds: float
    """Wall-clock seconds of the whole load, index builds and ``VACUUM ANALYZE`` included."""


DOCUMENT_COLUMNS = (
    "project_id, name, content_type, size_bytes, status, markdown, content_hash, kind,"
    " page_count, extracted_at"
)
"""The ``documents`` columns :func:`ready_document_row` fills, in its order."""


def ready_document_row(project_id: UUID, name: str, document: SourceDocument) -> tuple[object, ...]:
    """A ready Markdown document's :data:`DOCUMENT_COLUMNS` values (no extraction, no blob)."""
    return (
        project_id,
        name,
        "text/markdown",
        len(document.markdown),
        "ready",
        document.markdown,
        document.content_hash,
        "text",
        max(1, len(find_page_markers(document.markdown))),
        "now",
    )


def _index_definitions(conn: psycopg.Connection) -> tuple[list[str], list[str]]:
    """(drop, create) statements for ``lexical_postings``' primary key and indexes."""
    drops: list[str] = []
    creates: list[str] = []
    for name, definition in conn.execute(
        "SELECT conname, pg_get_constraintdef(oid) FROM pg_constraint"
        " WHERE conrelid = 'lexical_postings'::regclass AND contype = 'p'"
    ).fetchall():
        drops.append(f"ALTER TABLE lexical_postings DROP CONSTRAINT {name}")
        creates.append(f"ALTER TABLE lexical_postings ADD CONSTRAINT {name} {definition}")
    for name, definition in conn.execute(
        "SELECT i.relname, pg_get_indexdef(i.oid) FROM pg_index x"
        " JOIN pg_class i ON i.oid = x.indexrelid"
        " WHERE x.indrelid = 'lexical_postings'::regclass AND NOT x.indisprimary"
    ).fetchall():
        drops.append(f"DROP INDEX {name}")
        creates.append(definition)
    return drops, creates


def bulk_load(
    url: str,
    project_id: UUID,
    documents: Iterable[SourceDocument],
    index: ChunkIndex,
    *,
    suffix: bool = True,
    log: bool = False,
) -> Loaded:
    """Write ``documents`` as ready documents of ``project_id`` with their passage terms;
    ``suffix`` makes repeated names unique (as ``bench.prefilter.add_documents`` does)."""
    started = time.perf_counter()
    config = index.terms_config
    count = passages = 0
    with psycopg.connect(url, autocommit=True) as conn:
        drops, creates = _index_definitions(conn)
        for statement in drops:
            conn.execute(statement)  # type: ignore[call-overload]
        batch: list[SourceDocument] = []
        for document in documents:
            name = f"{document.name} {uuid4().hex[:8]}" if suffix else document.name
            batch.append(
                SourceDocument(str(uuid4()), name, document.content_hash, document.markdown)
            )
            if len(batch) == BATCH:
                passages += _write(conn, project_id, batch, index, config)
                count += len(batch)
                batch = []
                if log:
                    print(f"  {count:,} documents, {passages:,} passages", flush=True)
        if batch:
            passages += _write(conn, project_id, batch, index, config)
            count += len(batch)
        conn.execute("SET maintenance_work_mem = '512MB'")
        for statement in creates:
            conn.execute(statement)  # type: ignore[call-overload]
        conn.execute("VACUUM ANALYZE")
    return Loaded(count, passages, time.perf_counter() - started)


def _write(
    conn: psycopg.Connection,
    project_id: UUID,
    batch: list[SourceDocument],
    index: ChunkIndex,
    config: str,
) -> int:
    terms = [index.passage_terms(document) for document in batch]
    with conn.transaction():
        with conn.cursor().copy(f"COPY documents (id, {DOCUMENT_COLUMNS}) FROM STDIN") as copy:
            for document in batch:
                copy.write_row(
                    (document.id, *ready_document_row(project_id, document.name, document))
                )
        with conn.cursor().copy(
            "COPY lexical_documents (project_id, document_id, content_hash, config, language,"
            " passages, terms, vocabulary, written_language, passage_layout) FROM STDIN"
        ) as copy:
            for document, found in zip(batch, terms, strict=True):
                copy.write_row(
                    (
                        project_id,
                        document.id,
                        document.content_hash,
                        config,
                        found.language,
                        len(found.terms),
                        sum(len(words) for words in found.terms),
                        vocabulary(found),
                        found.written,
                        layout_json(found.layout),
                    )
                )
        with conn.cursor().copy(queries["copy_lexical_postings"]) as copy:
            copy.write(
                postings_copy_text(
                    (str(project_id), document.id, found)
                    for document, found in zip(batch, terms, strict=True)
                )
            )
    return sum(len(found.terms) for found in terms)
