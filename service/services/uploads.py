"""The three-step upload: grant, direct upload to the blob store, registration.

Every check happens in :func:`grant_upload`, before the grant exists and so
before any byte moves. A file larger than the multipart threshold, going to a
store that takes parts (S3), gets a MULTIPART grant: one presigned URL per part.
:func:`register_document` trusts nothing the client says about the object: it
re-derives the key from the upload it issued, joins a multipart upload's parts
only when every planned part is in the store, asks the store what is there, and
lets the unique index settle a race between two files of the same name.
:func:`sweep_abandoned_uploads` removes what grants that were never registered
left in the store, and what a grant still delivered after its document was deleted
(deleting withdraws the grant; the local store refuses it, see
:func:`grant_withdrawn`, but an S3 presigned URL cannot be recalled).
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

import anyio.to_thread

from extract import UnsupportedFormatError, kind_for_upload
from service.errors import (
    DuplicateDocumentName,
    FileTooLarge,
    InvalidRequest,
    UnsupportedFileType,
    UploadAlreadyUsed,
    UploadIncomplete,
    UploadNotFound,
)
from service.records import Document, Principal, Upload
from service.services import projects
from service.services.filenames import clean_filename
from service.storage.blobs import BlobStoreError, MissingUploadParts, MultipartBlobStore
from service.storage.blobs.multipart import part_size_for
from service.storage.db import Connection, connection, unique_violation_as
from sql import queries

if TYPE_CHECKING:
    from service.runtime import Runtime
    from service.storage.blobs import BlobStore, UploadGrant

logger = logging.getLogger(__name__)


class GrantedUpload(NamedTuple):
    upload: Upload
    grant: UploadGrant


def object_key(project_id: UUID, upload_id: UUID) -> str:
    """Where an upload's bytes live; derived by the server, never taken from a client."""
    return f"projects/{project_id}/uploads/{upload_id}"


async def ensure_name_is_free(conn: Connection, project_id: UUID, name: str) -> None:
    found = await (
        await conn.execute(
            queries["fetch_document_by_name"], {"project_id": project_id, "name": name}
        )
    ).fetchone()
    if found is not None:
        raise DuplicateDocumentName(
            f"A document named {name!r} is already in this project; rename the file or delete the old one."
        )


def check_file(
    runtime: Runtime, filename: str, content_type: str | None, size: int
) -> tuple[str, str]:
    """(clean name, content type) when the file may be uploaded; the refusal otherwise."""
    name = clean_filename(filename)
    limit = runtime.settings.storage.max_upload_bytes
    if size < 1:
        raise InvalidRequest("The file is empty.", field="size")
    if size > limit:
        raise FileTooLarge(
            f"The file is {size / 1_048_576:.1f} MB; the limit is {limit / 1_048_576:.0f} MB.",
            size=size,
            limit=limit,
        )
    try:
        kind = kind_for_upload(name, content_type)
    except UnsupportedFormatError as exc:
        raise UnsupportedFileType(exc.message) from exc
    return name, content_type or _default_content_type(kind)


def _default_content_type(kind: str) -> str:
    return {
        "pdf": "application/pdf",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "csv": "text/csv",
        "html": "text/html",
        "markdown": "text/markdown",
    }.get(kind, "text/plain")


async def grant_upload(
    runtime: Runtime,
    conn: Connection,
    principal: Principal,
    *,
    project_id: UUID,
    filename: str,
    content_type: str | None,
    size: int,
) -> GrantedUpload:
    """Check everything, record the upload, and return the grant a client uploads with."""
    runtime.upload_limiter.check(str(principal.token_id))
    await projects.get_project(conn, principal.user_id, project_id)
    name, declared_type = check_file(runtime, filename, content_type, size)
    await ensure_name_is_free(conn, project_id, name)

    upload_id = uuid.uuid4()
    key = object_key(project_id, upload_id)
    storage = runtime.settings.storage
    expiry = storage.upload_expiry_seconds
    store = runtime.blobs
    part_size: int | None = None
    if isinstance(store, MultipartBlobStore) and size > storage.multipart_threshold_bytes:
        # Starting the multipart upload is itself a call to the store.
        part_size = part_size_for(size, storage.multipart_part_bytes)
        grant = await anyio.to_thread.run_sync(
            lambda: store.presign_multipart_upload(
                key, content_type=declared_type, size=size, part_size=part_size, expires_in=expiry
            )
        )
    else:
        # Presigning is local arithmetic; ask the store itself so a grant is never handed
        # out for a store that is down (BlobStoreUnavailable: 503 blob_store_unavailable).
        await anyio.to_thread.run_sync(store.check)
        grant = await anyio.to_thread.run_sync(
            lambda: store.presign_upload(
                key, content_type=declared_type, max_size=size, expires_in=expiry
            )
        )
    values = {
        "id": upload_id,
        "project_id": project_id,
        "user_id": principal.user_id,
        "filename": name,
        "content_type": declared_type,
        "size_bytes": size,
        "object_key": key,
        "expires_at": max(grant.expires_at, datetime.now(UTC) + timedelta(seconds=expiry)),
        "multipart_id": grant.multipart_id,
        "part_size_bytes": part_size,
    }
    try:
        row = await (await conn.execute(queries["insert_upload"], values)).fetchone()
    except Exception:
        # Unrecorded, the grant would never be swept: drop the multipart upload it started.
        if grant.multipart_id is not None and isinstance(store, MultipartBlobStore):
            with contextlib.suppress(BlobStoreError):
                await anyio.to_thread.run_sync(
                    store.abort_multipart_upload, key, grant.multipart_id
                )
        raise
    assert row is not None
    return GrantedUpload(Upload.from_row(row), grant)


async def register_document(
    runtime: Runtime, conn: Connection, principal: Principal, *, project_id: UUID, upload_id: UUID
) -> Document:
    """Turn a finished upload into a pending document and queue its extraction."""
    await projects.get_project(conn, principal.user_id, project_id)
    async with conn.transaction():
        row = await (
            await conn.execute(
                queries["fetch_upload_for_update"],
                {"upload_id": upload_id, "project_id": project_id, "user_id": principal.user_id},
            )
        ).fetchone()
        if row is None:
            raise UploadNotFound()
        upload = Upload.from_row(row)
        if upload.consumed_at is not None:
            raise UploadAlreadyUsed()
        info = await anyio.to_thread.run_sync(runtime.blobs.head, upload.object_key)
        if info is None and upload.multipart_id is not None:
            await _join_parts(runtime.blobs, upload)
            info = await anyio.to_thread.run_sync(runtime.blobs.head, upload.object_key)
        if info is None:
            raise UploadIncomplete(
                "The file has not reached the blob store; upload it with the grant first."
            )
        if info.size != upload.size_bytes:
            raise UploadIncomplete(
                f"The stored file has {info.size} bytes but the grant was for {upload.size_bytes}; upload it again."
            )
        duplicate = DuplicateDocumentName(
            f"A document named {upload.filename!r} is already in this project; rename the file or delete the old one."
        )
        try:
            with unique_violation_as(duplicate):
                created = await (
                    await conn.execute(
                        queries["insert_document"],
                        {
                            "project_id": project_id,
                            "name": upload.filename,
                            "content_type": upload.content_type,
                            "size_bytes": upload.size_bytes,
                            "object_key": upload.object_key,
                            "status": "pending",
                        },
                    )
                ).fetchone()
        except DuplicateDocumentName:
            # The loser of a same-name race keeps nothing behind in the store.
            await anyio.to_thread.run_sync(runtime.blobs.delete, upload.object_key)
            raise
        await conn.execute(queries["consume_upload"], {"upload_id": upload_id})
    assert created is not None
    document = Document.from_row(created)
    await runtime.jobs.enqueue_extraction(document.id)
    return document


async def _join_parts(store: BlobStore, upload: Upload) -> None:
    """Ask the store to join a multipart upload's parts, once every planned part is there."""
    assert upload.multipart_id is not None and upload.part_size_bytes is not None
    if not isinstance(store, MultipartBlobStore):
        raise UploadIncomplete(
            "This upload went to a store that is no longer configured; upload the file again."
        )
    multipart_id, part_size = upload.multipart_id, upload.part_size_bytes
    try:
        await anyio.to_thread.run_sync(
            lambda: store.complete_multipart_upload(
                upload.object_key, multipart_id, size=upload.size_bytes, part_size=part_size
            )
        )
    except MissingUploadParts as exc:
        raise UploadIncomplete(
            f"{exc.message} Send those parts with their URLs from the grant, then register again.",
            missing_parts=exc.numbers,
        ) from exc


async def sweep_abandoned_uploads(runtime: Runtime, conn: Connection, *, limit: int = 100) -> int:
    """Remove the bytes (or unfinished parts) of grants never registered long after they
    expired, and forget the grants; returns how many were swept.

    Rows being registered right now are locked, so they are skipped; a store error
    leaves the row for the next sweep.
    """
    swept = 0
    async with conn.transaction():
        rows = await (
            await conn.execute(
                queries["lock_abandoned_uploads"],
                {
                    "after_seconds": runtime.settings.storage.abandoned_upload_after_seconds,
                    "limit": limit,
                },
            )
        ).fetchall()
        for row in rows:
            upload = Upload.from_row(row)
            try:
                await anyio.to_thread.run_sync(_remove_upload_bytes, runtime.blobs, upload)
            except BlobStoreError as exc:
                logger.warning("could not sweep abandoned upload %s: %s", upload.id, exc)
                continue
            await conn.execute(queries["delete_upload"], {"upload_id": upload.id})
            swept += 1
    return swept


async def grant_withdrawn(runtime: Runtime, key: str) -> bool:
    """Whether the upload grant for ``key`` was withdrawn (its document was deleted)."""
    async with connection(runtime.pool) as conn:
        row = await (
            await conn.execute(queries["fetch_upload_revocation"], {"object_key": key})
        ).fetchone()
    return row is not None and row["revoked_at"] is not None


def _remove_upload_bytes(store: BlobStore, upload: Upload) -> None:
    if upload.multipart_id is not None and isinstance(store, MultipartBlobStore):
        store.abort_multipart_upload(upload.object_key, upload.multipart_id)
    store.delete(upload.object_key)
