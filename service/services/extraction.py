"""Extract one stored document and save the outcome: the step jobs and `shortlist ingest` share.

A document ends ``ready`` (its whole Markdown saved once, with a content hash)
or ``error`` (a stable code and a message a person can act on). Transient
trouble — the database or blob store unreachable — is raised instead, so the
job queue retries it.
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

import anyio
import anyio.to_thread
from psycopg.types.json import Jsonb

from extract import (
    KIND_CONTENT_TYPES,
    Extraction,
    ExtractionError,
    ExtractionLimits,
    OcrOptions,
    SandboxPool,
)
from extract.wire import to_wire
from retrieval.types import SourceDocument
from service.errors import ShortlistError
from service.services import figures, imports, prefilter
from service.storage.blobs import BlobNotFound
from service.storage.db import Connection, connection, execute, fetch_one
from sql import queries

if TYPE_CHECKING:
    from retrieval import ChunkIndex
    from retrieval.index import PassageTerms
    from service.runtime import Runtime
    from service.settings import Settings

logger = logging.getLogger(__name__)

#: Channel on which a document that became ready is announced (payload: its id).
READY_CHANNEL = "shortlist_document_ready"
#: The code of a document whose outcome storage or database trouble kept from being saved.
FAILED_CODE = "extraction_failed"
#: Seconds between two writes of a document's extraction progress (pages done / total).
PROGRESS_INTERVAL_SECONDS = 1.0
#: Seconds between looks for the first progress report, written as soon as it arrives so that
#: even a document read in under :data:`PROGRESS_INTERVAL_SECONDS` shows its pages being read.
FIRST_PROGRESS_POLL_SECONDS = 0.05


class Outcome(NamedTuple):
    document_id: UUID
    status: str
    error_code: str | None = None
    error_message: str | None = None


def limits_for(settings: Settings) -> ExtractionLimits:
    return ExtractionLimits(
        max_bytes=settings.storage.max_upload_bytes,
        max_pages=settings.extraction.max_pages,
        timeout_seconds=settings.extraction.timeout_seconds,
        timeout_ceiling_seconds=settings.extraction.timeout_ceiling_seconds,
        memory_mb=settings.extraction.memory_mb,
        ocr=OcrOptions(
            engine=settings.ocr.engine,
            languages=tuple(settings.ocr.languages),
            dpi=settings.ocr.dpi,
            max_pages=settings.ocr.max_pages,
            page_seconds=settings.ocr.page_seconds,
            force=settings.ocr.force,
        ),
        layout_max_pages=settings.extraction.layout_max_pages,
        layout_every_page=settings.extraction.layout_every_page,
    )


def sandbox_pool(settings: Settings) -> SandboxPool:
    """The extraction processes of a worker, as the settings shape them."""
    extraction = settings.extraction
    return SandboxPool(
        extraction.warm_processes,
        memory_mb=extraction.memory_mb,
        workers=extraction.workers,
        pages_per_part=extraction.pages_per_part,
        split_min_pages=extraction.split_min_pages,
        documents_per_child=extraction.documents_per_child,
        in_process_max_bytes=extraction.in_process_max_bytes,
    )


def content_hash(markdown: str) -> str:
    return hashlib.sha256(markdown.encode("utf-8")).hexdigest()


def stored_markdown(extraction: Extraction) -> str:
    """The Markdown as stored: some PDFs carry NUL characters in their text, which PostgreSQL
    cannot store; each becomes U+FFFD, so the text keeps its length and its page markers."""
    return extraction.markdown.replace("\x00", "\ufffd")


class StoredTerms(NamedTuple):
    """A document's passage terms for the lexical prefilter, worked out before saving."""

    document: SourceDocument
    config: str
    terms: PassageTerms


def stored_terms(
    index: ChunkIndex, document_id: UUID, name: str, extraction: Extraction
) -> StoredTerms:
    """The extraction's passages as the search's terms (:mod:`service.services.prefilter`);
    CPU work, for a worker thread."""
    markdown = stored_markdown(extraction)
    document = SourceDocument(str(document_id), name, content_hash(markdown), markdown)
    return StoredTerms(document, index.terms_config, index.passage_terms(document))


async def lexical_terms(
    runtime: Runtime, document_id: UUID, name: str, extraction: Extraction
) -> StoredTerms:
    """:func:`stored_terms`, worked out off the event loop."""
    return await anyio.to_thread.run_sync(
        stored_terms, runtime.search.index, document_id, name, extraction
    )


class Extracted(NamedTuple):
    """A successful extraction to save, with its passage terms when they were worked out."""

    document_id: UUID
    extraction: Extraction
    terms: StoredTerms | None = None


async def save_extraction(
    conn: Connection,
    document_id: UUID,
    extraction: Extraction,
    *,
    terms: StoredTerms | None = None,
) -> bool:
    """Store a successful extraction, with its passage terms when given, in one transaction;
    False when the document was deleted meanwhile (:func:`save_extractions` of one)."""
    return document_id in await save_extractions(conn, [Extracted(document_id, extraction, terms)])


async def save_extractions(conn: Connection, extracted: Sequence[Extracted]) -> set[UUID]:
    """Store successful extractions, with their passage terms, in one transaction; the ids of
    the documents saved (one deleted meanwhile is left out). Several documents cost a few
    statements in all, not a few each: the texts go in one pipelined batch and the terms
    with :func:`prefilter.store_many_terms`; each saved document is announced on
    :data:`READY_CHANNEL` after commit.

    The document's content type becomes its detected kind's (what its bytes are), so
    nothing the uploader declared is kept as its type. NUL characters become U+FFFD
    (:func:`stored_markdown`).
    """
    if not extracted:
        return set()
    saved: set[UUID] = set()
    async with conn.transaction():
        cursor = conn.cursor()
        await cursor.executemany(
            queries["store_extraction"], [_extraction_values(item) for item in extracted],
            returning=True,
        )  # fmt: skip
        while True:
            saved.update(row["id"] for row in await cursor.fetchall())
            if not cursor.nextset():
                break
        by_config: dict[str, list[tuple[SourceDocument, PassageTerms]]] = {}
        for item in extracted:
            if item.terms is not None and item.document_id in saved:
                by_config.setdefault(item.terms.config, []).append(
                    (item.terms.document, item.terms.terms)
                )
        for config, documents in by_config.items():
            await prefilter.store_many_terms(conn, config, documents)
    if saved:
        await execute(
            conn,
            "notify_documents_ready",
            channel=READY_CHANNEL,
            document_ids=[str(item.document_id) for item in extracted if item.document_id in saved],
        )
    return saved


def _extraction_values(item: Extracted) -> dict[str, object]:
    extraction = item.extraction
    markdown = stored_markdown(extraction)
    return {
        "document_id": item.document_id,
        "markdown": markdown,
        "content_hash": content_hash(markdown),
        "kind": extraction.kind,
        "content_type": KIND_CONTENT_TYPES[extraction.kind],
        "page_count": extraction.page_count,
        "warnings": [warning.replace("\x00", "\ufffd") for warning in extraction.warnings],
        "ocr_pages": list(extraction.ocr_pages),
        "figures": figures.stored(extraction.figures),
        "ocr_lines": Jsonb(to_wire(list(extraction.ocr_lines))),
    }


async def save_failure(conn: Connection, document_id: UUID, code: str, message: str) -> None:
    await execute(
        conn,
        "store_extraction_error",
        document_id=document_id,
        error_code=code,
        error_message=message,
    )


class LatestProgress:
    """The furthest ``(pages_done, page_count)`` the extractor reported, from any thread.

    Pages of a PDF read in parts finish in any order, and a report can arrive late; of one
    page count, the pages done kept only ever grow, so the recorded progress never steps back.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._furthest: tuple[int, int] | None = None
        self._new = False

    def __call__(self, pages_done: int, page_count: int) -> None:
        with self._lock:
            furthest = self._furthest
            if furthest is None or page_count != furthest[1] or pages_done > furthest[0]:
                self._furthest = (pages_done, page_count)
                self._new = True

    def take(self) -> tuple[int, int] | None:
        """The furthest progress when it moved since the last take; else ``None``."""
        with self._lock:
            if not self._new:
                return None
            self._new = False
            return self._furthest


async def _record_progress(runtime: Runtime, document_id: UUID, latest: LatestProgress) -> None:
    """Write the first progress as soon as it is reported, then the newest every
    :data:`PROGRESS_INTERVAL_SECONDS`, until cancelled."""
    interval = FIRST_PROGRESS_POLL_SECONDS
    while True:
        await anyio.sleep(interval)
        progress = latest.take()
        if progress is None:
            continue
        interval = PROGRESS_INTERVAL_SECONDS
        try:
            async with connection(runtime.pool) as conn:
                await execute(
                    conn,
                    "record_extraction_progress",
                    document_id=document_id,
                    pages_done=progress[0],
                    pages_total=progress[1],
                )
        except Exception:  # progress is a courtesy: the extraction goes on without it
            logger.warning("document %s: could not record progress", document_id, exc_info=True)


async def extract_bytes(
    runtime: Runtime,
    data: bytes,
    filename: str,
    content_type: str | None,
    *,
    document_id: UUID | None = None,
) -> Extraction:
    """Run the sandboxed extractor in a worker thread (it blocks on its child processes);
    with ``document_id``, record its progress (pages done / total) on the document."""
    limits = limits_for(runtime.settings)
    latest = LatestProgress()

    def run() -> Extraction:
        return runtime.sandboxes.extract(
            data, filename, content_type, limits=limits, progress=latest
        )

    if document_id is None:
        return await anyio.to_thread.run_sync(run, abandon_on_cancel=True)
    outcome: list[Extraction | ExtractionError] = []

    async def extract() -> None:
        try:
            outcome.append(await anyio.to_thread.run_sync(run, abandon_on_cancel=True))
        except ExtractionError as exc:
            outcome.append(exc)
        tasks.cancel_scope.cancel()  # stops the progress recorder

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(_record_progress, runtime, document_id, latest)
        tasks.start_soon(extract)
    [result] = outcome
    if isinstance(result, ExtractionError):
        raise result
    return result


async def extract_and_save(
    runtime: Runtime, document_id: UUID, data: bytes, filename: str, content_type: str | None
) -> Outcome:
    """Extract ``data`` and record the outcome on the (already claimed) document.

    No connection is held while the extractor runs (it may take minutes).
    """
    try:
        extraction = await extract_bytes(
            runtime, data, filename, content_type, document_id=document_id
        )
    except ExtractionError as exc:
        async with connection(runtime.pool) as conn:
            await save_failure(conn, document_id, exc.code, exc.message)
        return Outcome(document_id, "error", exc.code, exc.message)
    terms = await lexical_terms(runtime, document_id, filename, extraction)
    async with connection(runtime.pool) as conn:
        saved = await save_extraction(conn, document_id, extraction, terms=terms)
    return Outcome(document_id, "ready" if saved else "deleted")


async def claim(conn: Connection, document_id: UUID) -> dict[str, object] | None:
    """Mark the document as being extracted; None when it is gone or already settled."""
    return await fetch_one(conn, "claim_document_for_extraction", document_id=document_id)


async def extract_stored_document(runtime: Runtime, document_id: UUID) -> Outcome:
    """The job body: fetch the original from the blob store, extract it, save the outcome."""
    async with connection(runtime.pool) as conn:
        row = await claim(conn, document_id)
    if row is None:
        return Outcome(document_id, "skipped")
    key = str(row["object_key"])
    content_type = str(row["content_type"])
    try:
        data = await anyio.to_thread.run_sync(runtime.blobs.read, key)
    except BlobNotFound:
        if row["source_url"] is None:
            async with connection(runtime.pool) as conn:
                await save_failure(
                    conn,
                    document_id,
                    "original_missing",
                    "The uploaded file is missing from storage: delete the document and upload it again.",
                )
            return Outcome(document_id, "error", "original_missing")
        try:
            fetched = await imports.fetch_original(
                runtime, document_id, url=str(row["source_url"]), key=key, name=str(row["name"])
            )
        except ShortlistError as exc:  # a refused or failed fetch is the document's outcome
            async with connection(runtime.pool) as conn:
                await save_failure(conn, document_id, exc.code, exc.message)
            return Outcome(document_id, "error", exc.code, exc.message)
        data, content_type = fetched.data, fetched.content_type
    outcome = await extract_and_save(runtime, document_id, data, str(row["name"]), content_type)
    logger.info("document %s: %s %s", document_id, outcome.status, outcome.error_code or "")
    return outcome
