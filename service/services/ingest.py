"""`shortlist ingest`: extract local files and store them directly, no upload grant, no queue.

It shares every step that matters with the upload flow — the same file checks,
the same duplicate-name rule (and unique index), the same sandboxed extractor
and the same code that saves the outcome — and keeps the original in the blob
store too, so ``open`` and ``re-extract`` work for ingested documents.
"""

from __future__ import annotations

import mimetypes
import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

import anyio.to_thread

from service.errors import FileUnreadable, ShortlistError
from service.records import Document, Principal, Project, SyncedFile
from service.services import scopes, uploads
from service.services.extraction import Outcome, extract_and_save
from service.services.folders import NamedFile
from service.storage.db import connection

if TYPE_CHECKING:
    from service.runtime import Runtime


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


async def ingest_files(
    runtime: Runtime, principal: Principal, project: Project, files: list[NamedFile]
) -> list[Ingested]:
    """What ``shortlist ingest`` does for ``principal``: refused (TokenReadOnly) before any file
    is read unless the caller may write; then :func:`ingest_file` for each file under its name,
    one per CPU core at a time (small text files are read in this process and mostly wait for
    the database); results in the order of ``files``."""
    scopes.require_write(principal)
    results: list[Ingested | None] = [None] * len(files)
    limiter = anyio.CapacityLimiter(os.cpu_count() or 1)

    async def one(index: int, file: NamedFile) -> None:
        async with limiter:
            results[index] = await ingest_file(runtime, project, file.path, name=file.name)

    async with anyio.create_task_group() as tasks:
        for index, file in enumerate(files):
            tasks.start_soon(one, index, file)
    return [result for result in results if result is not None]


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
