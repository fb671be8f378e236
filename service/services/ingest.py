"""`shortlist ingest`: extract local files and store them directly, no upload grant, no queue.

It shares every step that matters with the upload flow — the same file checks,
the same duplicate-name rule (and unique index), the same sandboxed extractor
and the same code that saves the outcome — and keeps the original in the blob
store too, so ``open`` and ``re-extract`` work for ingested documents.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

import anyio.to_thread
import psycopg

from extract import ExtractionError
from service.errors import FileUnreadable, ShortlistError
from service.records import Document, Principal, Project, SyncedFile
from service.services import scopes, uploads
from service.services.extraction import (
    FAILED_CODE,
    Extracted,
    Outcome,
    extract_and_save,
    limits_for,
    save_extraction,
    save_extractions,
    save_failure,
    stored_terms,
)
from service.services.folders import NamedFile
from service.services.uploads import StoredFile
from service.storage.db import connection, database_error

if TYPE_CHECKING:
    from service.runtime import Runtime

logger = logging.getLogger(__name__)


class Ingested(NamedTuple):
    path: Path
    name: str
    """The name the file was to be stored under."""
    document: Document | None
    outcome: Outcome | None
    error: ShortlistError | None


async def ingest_file(
    runtime: Runtime, project: Project, path: Path, *, name: str | None = None
) -> Ingested:
    """Extract and store one file (as ``name``, else the file's own name); a refusal or
    failure, a file that cannot be read included, is returned, never raised. A step of
    :func:`ingest_files`, which checks the caller's scope (and of fixtures that own the
    database)."""
    name = name or path.name
    guessed = mimetypes.guess_type(path.name)[0]
    try:
        try:
            data = await anyio.to_thread.run_sync(path.read_bytes)
        except OSError as exc:
            raise FileUnreadable(path, exc) from exc
        document = await store_new_document(runtime, project.id, data, name, guessed)
    except ShortlistError as exc:
        return Ingested(path, name, None, None, exc)
    outcome = await extract_and_save(
        runtime, document.id, data, document.name, document.content_type
    )
    return Ingested(path, name, document, outcome, None)


BATCH_FILES = 1024
"""Small text files :func:`ingest_batch` stores together, at most: the more of them, the more
of their postings share a term's index pages, which matters more as the project grows (the
1.2M-passage SciFact corpus into one project, ``bench/ingest_growth.py``: 73.7 files/s at 256 a
batch, 113 at 1,024, 125 at 2,048 for a CLI of 1.0 against 1.6 GB at most). The price is a
longer transaction: while one is saved (seconds), another writer of the same project's common
terms (the worker saving an upload) waits for it; searches do not."""
BATCH_BYTES = 16 * 1024 * 1024
"""Their bytes, at most (each is at most ``extraction.in_process_max_bytes``)."""


async def ingest_files(
    runtime: Runtime,
    principal: Principal,
    project: Project,
    files: list[NamedFile],
    *,
    batch_files: int = BATCH_FILES,
) -> list[Ingested]:
    """What ``shortlist ingest`` does for ``principal``: refused (TokenReadOnly) before any file
    is read unless the caller may write; then each file under its name, one task per CPU core
    at a time; results in the order of ``files``.

    Small text files (those the extractor reads in this process) go :data:`BATCH_FILES` at a
    time through :func:`ingest_batch`, which stores them in a few statements in all: one at a
    time, a four-line note spent most of its time in a dozen round trips and two commits. Any
    other file is :func:`ingest_file`'s. ``batch_files`` sets another batch size."""
    scopes.require_write(principal)
    results: list[Ingested | None] = [None] * len(files)
    limiter = anyio.CapacityLimiter(os.cpu_count() or 1)
    sizes = await anyio.to_thread.run_sync(_sizes, [file.path for file in files])
    batches, singles = _batches(runtime, files, sizes, batch_files)

    async def one(index: int) -> None:
        async with limiter:
            file = files[index]
            results[index] = await ingest_file(runtime, project, file.path, name=file.name)

    async def batch(indexes: list[int]) -> None:
        async with limiter:
            done = await ingest_batch(runtime, project, [files[index] for index in indexes])
        for index, result in zip(indexes, done, strict=True):
            results[index] = result

    async with anyio.create_task_group() as tasks:
        for indexes in batches:
            tasks.start_soon(batch, indexes)
        for index in singles:
            tasks.start_soon(one, index)
    return [result for result in results if result is not None]


def _sizes(paths: list[Path]) -> list[int | None]:
    sizes: list[int | None] = []
    for path in paths:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(None)  # ingest_file reports why it cannot be read
    return sizes


def _batches(
    runtime: Runtime, files: list[NamedFile], sizes: list[int | None], batch_files: int
) -> tuple[list[list[int]], list[int]]:
    """The files' indexes: batches of small text files, and every other file alone."""
    batches: list[list[int]] = []
    singles: list[int] = []
    current: list[int] = []
    current_bytes = 0
    for index, (file, size) in enumerate(zip(files, sizes, strict=True)):
        guessed = mimetypes.guess_type(file.path.name)[0]
        if size is None or not runtime.sandboxes.reads_in_process(file.name, guessed, size):
            singles.append(index)
            continue
        if current and (len(current) == batch_files or current_bytes + size > BATCH_BYTES):
            batches.append(current)
            current, current_bytes = [], 0
        current.append(index)
        current_bytes += size
    if current:
        batches.append(current)
    return batches, singles


class _Checked(NamedTuple):
    """A file of a batch that passed the upload checks."""

    position: int
    """Its place in the batch."""
    data: bytes
    stored: StoredFile


async def ingest_batch(
    runtime: Runtime, project: Project, files: Sequence[NamedFile]
) -> list[Ingested]:
    """:func:`ingest_file` for several small text files, in the order given, with the same
    checks, name rule, extractor and saving code; each file's refusal or failure is its own.

    The files are read and written to the store in one worker-thread call each, checked
    against the project's names in one query, inserted in one statement, extracted (with their
    passage terms) in one thread call and saved in one transaction. Should that transaction
    fail, they are saved one at a time, so a document at fault fails alone.
    """
    results: dict[int, Ingested] = {}

    def refuse(index: int, error: ShortlistError) -> None:
        results[index] = Ingested(files[index].path, files[index].name, None, None, error)

    contents = await anyio.to_thread.run_sync(_read_all, [file.path for file in files])
    checked: list[_Checked] = []
    for index, (file, data) in enumerate(zip(files, contents, strict=True)):
        try:
            if isinstance(data, OSError):
                raise FileUnreadable(file.path, data) from data
            guessed = mimetypes.guess_type(file.path.name)[0]
            name, stored_type = uploads.check_file(runtime, file.name, guessed, len(data))
        except ShortlistError as exc:
            refuse(index, exc)
            continue
        key = uploads.object_key(project.id, uuid.uuid4())
        checked.append(_Checked(index, data, StoredFile(name, stored_type, len(data), key)))
    if checked:
        async with connection(runtime.pool) as conn:
            taken = await uploads.taken_names(conn, project.id, [c.stored.name for c in checked])
        for item in checked:
            if item.stored.name in taken:
                refuse(item.position, uploads.name_taken(item.stored.name))
        checked = [item for item in checked if item.position not in results]
    # No connection is held while the store writes, as for one file.
    failures = await anyio.to_thread.run_sync(_write_all, runtime, checked)
    for index, error in failures.items():
        refuse(index, error)
    checked = [item for item in checked if item.position not in results]
    created: dict[str, Document] = {}
    if checked:
        async with connection(runtime.pool) as conn:
            created = await uploads.insert_ingested_documents(
                conn, project.id, [item.stored for item in checked]
            )
    lost = [item for item in checked if item.stored.object_key not in created]
    if lost:  # their names were taken meanwhile, or by an earlier file of this batch
        await anyio.to_thread.run_sync(_delete_all, runtime, lost)
        for item in lost:
            refuse(item.position, uploads.name_taken(item.stored.name))
    stored = [
        (item, created[item.stored.object_key])
        for item in checked
        if item.stored.object_key in created
    ]
    outcomes = await save_batch(runtime, stored)
    for item, document in stored:
        file = files[item.position]
        results[item.position] = Ingested(
            file.path, file.name, document, outcomes[document.id], None
        )
    return [results[index] for index in range(len(files))]


def _read_all(paths: list[Path]) -> list[bytes | OSError]:
    contents: list[bytes | OSError] = []
    for path in paths:
        try:
            contents.append(path.read_bytes())
        except OSError as exc:
            contents.append(exc)
    return contents


def _delete_all(runtime: Runtime, checked: list[_Checked]) -> None:
    for item in checked:
        runtime.blobs.delete(item.stored.object_key)


def _write_all(runtime: Runtime, checked: list[_Checked]) -> dict[int, ShortlistError]:
    """Write each file to the store; the refusal of each that could not be written."""
    failures: dict[int, ShortlistError] = {}
    for item in checked:
        try:
            runtime.blobs.write(item.stored.object_key, item.data, item.stored.content_type)
        except ShortlistError as exc:
            failures[item.position] = exc
    return failures


async def save_batch(
    runtime: Runtime, documents: list[tuple[_Checked, Document]]
) -> dict[UUID, Outcome]:
    """Extract the batch's claimed documents in one worker-thread call and save the outcomes."""
    extracted = await anyio.to_thread.run_sync(_extract_all, runtime, documents)
    outcomes: dict[UUID, Outcome] = {}
    successes = [result for _, result in extracted if isinstance(result, Extracted)]
    failures = [(i, result) for i, result in extracted if isinstance(result, ExtractionError)]
    if failures:
        async with connection(runtime.pool) as conn:
            for document_id, error in failures:
                await save_failure(conn, document_id, error.code, error.message)
                outcomes[document_id] = Outcome(document_id, "error", error.code, error.message)
    try:
        async with connection(runtime.pool) as conn:
            saved = await save_extractions(conn, successes)
    except psycopg.Error as exc:
        if database_error(exc) is not None:
            raise  # the database is gone: no document of the batch would fare better alone
        logger.warning(
            "a batch of %d documents could not be saved together (%s); saving one at a time",
            len(successes),
            exc.__class__.__name__,
        )
        for item in successes:
            outcomes[item.document_id] = await _save_alone(runtime, item)
        return outcomes
    for item in successes:
        status = "ready" if item.document_id in saved else "deleted"
        outcomes[item.document_id] = Outcome(item.document_id, status)
    return outcomes


SAVE_FAILED_MESSAGE = (
    "The database refused to store this document's text; re-extract it to try again."
)


async def _save_alone(runtime: Runtime, item: Extracted) -> Outcome:
    """Save one document of a batch whose transaction failed; should the database refuse this
    one too (not for an outage), it ends ``error`` on its own."""
    try:
        async with connection(runtime.pool) as conn:
            saved = await save_extraction(conn, item.document_id, item.extraction, terms=item.terms)
    except psycopg.Error as exc:
        if database_error(exc) is not None:
            raise
        logger.error("document %s: its extraction could not be saved: %s", item.document_id, exc)
        async with connection(runtime.pool) as conn:
            await save_failure(conn, item.document_id, FAILED_CODE, SAVE_FAILED_MESSAGE)
        return Outcome(item.document_id, "error", FAILED_CODE, SAVE_FAILED_MESSAGE)
    return Outcome(item.document_id, "ready" if saved else "deleted")


def _extract_all(
    runtime: Runtime, documents: list[tuple[_Checked, Document]]
) -> list[tuple[UUID, Extracted | ExtractionError]]:
    limits = limits_for(runtime.settings)
    index = runtime.search.index
    extracted: list[tuple[UUID, Extracted | ExtractionError]] = []
    for item, document in documents:
        try:
            extraction = runtime.sandboxes.extract(
                item.data, document.name, document.content_type, limits=limits
            )
        except ExtractionError as exc:
            extracted.append((document.id, exc))
            continue
        terms = stored_terms(index, document.id, document.name, extraction)
        extracted.append((document.id, Extracted(document.id, extraction, terms)))
    return extracted


async def store_new_document(
    runtime: Runtime,
    project_id: UUID,
    data: bytes,
    name: str,
    content_type: str | None,
    *,
    sync: SyncedFile | None = None,
) -> Document:
    """Check ``data`` like an upload, keep it in the blob store and insert its row, claimed
    for extraction (the caller extracts it next, with :func:`extract_and_save`); with
    ``sync``, mirroring that file of a synced folder, recorded in the same statement.

    Raises the refusal: too large, unsupported type, a bad or duplicate name, a synced path
    another document mirrors.
    """
    clean_name, stored_type = uploads.check_file(runtime, name, content_type, len(data))
    key = uploads.object_key(project_id, uuid.uuid4())
    async with connection(runtime.pool) as conn:
        await uploads.ensure_name_is_free(conn, project_id, clean_name)
    # No connection is held while the store writes (a slow disk or S3 must not starve the
    # pool); a name taken meanwhile is caught by the unique index, and the file removed.
    await anyio.to_thread.run_sync(lambda: runtime.blobs.write(key, data, stored_type))
    async with connection(runtime.pool) as conn:
        return await uploads.insert_stored_document(
            runtime,
            conn,
            "insert_ingested_document",
            project_id=project_id,
            name=clean_name,
            content_type=stored_type,
            size_bytes=len(data),
            object_key=key,
            sync=sync,
        )
