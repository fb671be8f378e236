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
import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal, NamedTuple
from uuid import UUID

import anyio.to_thread

from extract import KIND_CONTENT_TYPES, Kind, UnsupportedFormatError, kind_for_upload
from service.errors import (
    DocumentNotFound,
    DuplicateDocumentName,
    FileTooLarge,
    InvalidContentType,
    InvalidRequest,
    SyncPathTaken,
    UnsupportedFileType,
    UploadAlreadyUsed,
    UploadIncomplete,
    UploadNotFound,
)
from service.records import Document, Principal, SyncedFile, Upload
from service.services import documents, projects, scopes, synced_files
from service.services.filenames import clean_filename
from service.storage.blobs import BlobStoreError, MissingUploadParts, MultipartBlobStore
from service.storage.blobs.multipart import part_size_for
from service.storage.db import (
    Connection,
    connection,
    execute,
    fetch_all,
    fetch_one,
    unique_violation_as,
)

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


SYNC_PATH_INDEX = "documents_project_sync_path_key"
"""The unique index of a project's synced files' paths (sql/schema.sql)."""


def name_taken(name: str) -> DuplicateDocumentName:
    """The refusal of a file whose name a document of the project already has."""
    return DuplicateDocumentName(
        f"A document named {name!r} is already in this project; rename the file or delete the old one."
    )


async def ensure_name_is_free(conn: Connection, project_id: UUID, name: str) -> None:
    found = await fetch_one(conn, "fetch_document_by_name", project_id=project_id, name=name)
    if found is not None:
        raise name_taken(name)


async def taken_names(conn: Connection, project_id: UUID, names: list[str]) -> set[str]:
    """Those of ``names`` that a document of the project already has (each as given), by the
    comparison :func:`ensure_name_is_free` makes."""
    rows = await fetch_all(conn, "find_taken_document_names", project_id=project_id, names=names)
    return {str(row["name"]) for row in rows}


class StoredFile(NamedTuple):
    """A checked file already in the blob store, for :func:`insert_ingested_documents`."""

    name: str
    content_type: str
    size_bytes: int
    object_key: str


async def insert_ingested_documents(
    conn: Connection, project_id: UUID, files: list[StoredFile]
) -> dict[str, Document]:
    """Insert the rows, claimed for extraction, of several files already in the store, in one
    statement; the documents created by object key. A file left out lost its name to a
    document of the project or to an earlier file of the list (the unique index decides, as
    for one file): the caller deletes its original and refuses it with :func:`name_taken`."""
    rows = await fetch_all(
        conn,
        "insert_ingested_documents",
        project_id=project_id,
        names=[file.name for file in files],
        content_types=[file.content_type for file in files],
        sizes=[file.size_bytes for file in files],
        object_keys=[file.object_key for file in files],
    )
    return {str(row["object_key"]): Document.from_row(row) for row in rows}


async def insert_stored_document(
    runtime: Runtime,
    conn: Connection,
    query_name: Literal["insert_document", "insert_ingested_document"],
    *,
    project_id: UUID,
    name: str,
    content_type: str,
    size_bytes: int,
    object_key: str,
    sync: SyncedFile | None = None,
    **params: object,
) -> Document:
    """Insert the row of a document whose file is already at ``object_key`` in the store; with
    ``sync``, the row records the synced file it mirrors in the same statement, so there is
    never a document the sync does not know.

    When a unique index says the name (or the synced file's path) is taken, the loser of a
    race, the file is deleted from the store, so nothing is left behind, and
    DuplicateDocumentName (or SyncPathTaken) is raised.
    """
    path_taken = {} if sync is None else {SYNC_PATH_INDEX: _path_taken(sync.path)}
    try:
        with unique_violation_as(name_taken(name), by_index=path_taken):
            row = await fetch_one(
                conn,
                query_name,
                project_id=project_id,
                name=name,
                content_type=content_type,
                size_bytes=size_bytes,
                object_key=object_key,
                **_sync_values(sync),
                **params,
            )
    except (DuplicateDocumentName, SyncPathTaken):
        await anyio.to_thread.run_sync(runtime.blobs.delete, object_key)
        raise
    assert row is not None
    return Document.from_row(row)


_TCHARS = r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"
_QUOTED = r'"(?:[\t !#-\[\]-~]|\\[\t -~])*"'
_MEDIA_TYPE = re.compile(
    rf"{_TCHARS}/{_TCHARS}(?:[ \t]*;[ \t]*{_TCHARS}=(?:{_TCHARS}|{_QUOTED}))*", re.ASCII
)
"""RFC 9110 section 8.3.1: ``type/subtype`` and ``; name=value`` parameters, printable ASCII."""


def check_content_type(content_type: str | None) -> str | None:
    """The declared media type without surrounding blanks; None when none was declared.

    Raises:
        InvalidContentType: for anything else (control characters such as NUL, CR or LF,
            non-ASCII, or text that is not ``type/subtype[; name=value]...``).
    """
    if content_type is None or not content_type.strip(" \t"):
        return None
    value = content_type.strip(" \t")
    if _MEDIA_TYPE.fullmatch(value) is None:
        raise InvalidContentType(
            f"{content_type!r} is not a media type; declare one such as application/pdf or "
            "text/plain (or none, and the file name decides)."
        )
    return value


def check_file(
    runtime: Runtime, filename: str, content_type: str | None, size: int
) -> tuple[str, str]:
    """(clean name, content type) when the file may be uploaded; the refusal otherwise.

    The content type is the declared kind's own (``KIND_CONTENT_TYPES``): the grant pins
    it, the store keeps it and the document is recorded with it until extraction finds
    what the bytes are. A declaration (which must be a media type) only picks the kind,
    after the extension.
    """
    name = clean_filename(filename)
    declared = check_content_type(content_type)
    limit = runtime.settings.storage.max_upload_bytes
    if size < 1:
        raise InvalidRequest("The file is empty.", field="size")
    if size > limit:
        raise FileTooLarge(
            f"The file is {size / 1_048_576:.1f} MB; the limit is {limit / 1_048_576:.0f} MB.",
            size=size,
            limit=limit,
        )
    return name, KIND_CONTENT_TYPES[declared_kind_of(name, declared)]


def declared_kind_of(filename: str, content_type: str | None) -> Kind:
    """The kind a file's name (or else its declared type) claims; UnsupportedFileType
    when neither names a kind that can be searched."""
    try:
        return kind_for_upload(filename, content_type)
    except UnsupportedFormatError as exc:
        raise UnsupportedFileType(exc.message) from exc


async def grant_upload(
    runtime: Runtime,
    conn: Connection,
    principal: Principal,
    *,
    project_id: UUID,
    filename: str,
    content_type: str | None,
    size: int,
    replaces: UUID | None = None,
) -> GrantedUpload:
    """Check everything, record the upload, and return the grant a client uploads with.

    ``replaces`` names a document of the project whose original the upload will replace
    (:func:`replace_original`): the file must then carry that document's name, which is
    not free.
    """
    scopes.require_write(principal)
    runtime.upload_limiter.check(str(principal.token_id))
    await projects.get_project(conn, principal.user_id, project_id)
    name, pinned_type = check_file(runtime, filename, content_type, size)
    if replaces is None:
        await ensure_name_is_free(conn, project_id, name)
    else:
        _check_same_name(await _document_in(conn, principal, project_id, replaces), name)

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
                key, content_type=pinned_type, size=size, part_size=part_size, expires_in=expiry
            )
        )
    else:
        # Presigning is local arithmetic; ask the store itself so a grant is never handed
        # out for a store that is down (BlobStoreUnavailable: 503 blob_store_unavailable).
        await anyio.to_thread.run_sync(store.check)
        grant = await anyio.to_thread.run_sync(
            lambda: store.presign_upload(
                key, content_type=pinned_type, max_size=size, expires_in=expiry
            )
        )
    values = {
        "id": upload_id,
        "project_id": project_id,
        "user_id": principal.user_id,
        "filename": name,
        "content_type": pinned_type,
        "size_bytes": size,
        "object_key": key,
        "expires_at": max(grant.expires_at, datetime.now(UTC) + timedelta(seconds=expiry)),
        "multipart_id": grant.multipart_id,
        "part_size_bytes": part_size,
    }
    try:
        row = await fetch_one(conn, "insert_upload", **values)
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


async def _finished_upload(
    runtime: Runtime, conn: Connection, principal: Principal, project_id: UUID, upload_id: UUID
) -> Upload:
    """The caller's unused upload into the project, locked, whose bytes are in the store
    (a MULTIPART upload's parts joined first); inside the caller's transaction."""
    row = await fetch_one(
        conn,
        "fetch_upload_for_update",
        upload_id=upload_id,
        project_id=project_id,
        user_id=principal.user_id,
    )
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
    return upload


def _sync_values(sync: SyncedFile | None) -> dict[str, object]:
    """The ``sync_*`` and ``original_sha256`` parameters of a query, from what a sync saw."""
    return {
        "sync_path": None if sync is None else sync.path,
        "original_sha256": None if sync is None else sync.sha256,
        "sync_size": None if sync is None else sync.size,
        "sync_mtime_ns": None if sync is None else sync.mtime_ns,
    }


async def register_document(
    runtime: Runtime,
    conn: Connection,
    principal: Principal,
    *,
    project_id: UUID,
    upload_id: UUID,
    sync: SyncedFile | None = None,
) -> Document:
    """Turn a finished upload into a pending document and queue its extraction; with
    ``sync``, the document mirrors that file of a synced folder (``shortlist sync``)."""
    scopes.require_write(principal)
    sync = synced_files.checked(sync)
    await projects.get_project(conn, principal.user_id, project_id)
    async with conn.transaction():
        upload = await _finished_upload(runtime, conn, principal, project_id, upload_id)
        document = await insert_stored_document(
            runtime,
            conn,
            "insert_document",
            project_id=project_id,
            name=upload.filename,
            # The declared kind's type (grants made before types were pinned hold the raw
            # declaration); extraction records what the bytes are.
            content_type=KIND_CONTENT_TYPES[declared_kind_of(upload.filename, upload.content_type)],
            size_bytes=upload.size_bytes,
            object_key=upload.object_key,
            status="pending",
            sync=sync,
        )
        await execute(conn, "consume_upload", upload_id=upload_id)
    await runtime.jobs.enqueue_extraction(document.id)
    return document


async def replace_original(
    runtime: Runtime,
    conn: Connection,
    principal: Principal,
    *,
    document_id: UUID,
    upload_id: UUID,
    sync: SyncedFile | None = None,
) -> Document:
    """Make a finished upload (granted with ``replaces``) the document's new original and
    queue its extraction; the document keeps its id and name. The old original is deleted."""
    scopes.require_write(principal)
    sync = synced_files.checked(sync)
    document = await documents.get_document(conn, principal, document_id)
    async with conn.transaction():
        upload = await _finished_upload(runtime, conn, principal, document.project_id, upload_id)
        _check_same_name(document, upload.filename)
        with unique_violation_as(_path_taken(sync.path if sync else "")):
            await execute(
                conn,
                "replace_document_original",
                document_id=document.id,
                object_key=upload.object_key,
                content_type=upload.content_type,
                size_bytes=upload.size_bytes,
                **_sync_values(sync),
            )
        await execute(conn, "consume_upload", upload_id=upload_id)
    await runtime.jobs.enqueue_extraction(document.id)
    if document.object_key and document.object_key != upload.object_key:
        with contextlib.suppress(BlobStoreError):  # an orphaned original is only storage
            await anyio.to_thread.run_sync(runtime.blobs.delete, document.object_key)
    return await documents.get_document(conn, principal, document.id)


async def _document_in(
    conn: Connection, principal: Principal, project_id: UUID, document_id: UUID
) -> Document:
    document = await documents.get_document(conn, principal, document_id)
    if document.project_id != project_id:
        raise DocumentNotFound("That document is not in this project.", document=str(document_id))
    return document


def _check_same_name(document: Document, filename: str) -> None:
    if filename.strip().casefold() != document.name.strip().casefold():
        raise InvalidRequest(
            f"A new original for {document.name!r} must carry its name, not {filename!r}.",
            field="filename",
        )


def _path_taken(path: str) -> SyncPathTaken:
    return SyncPathTaken(f"Another document of the project already mirrors {path!r}.")


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
        rows = await fetch_all(
            conn,
            "lock_abandoned_uploads",
            after_seconds=runtime.settings.storage.abandoned_upload_after_seconds,
            limit=limit,
        )
        for row in rows:
            upload = Upload.from_row(row)
            try:
                await anyio.to_thread.run_sync(_remove_upload_bytes, runtime.blobs, upload)
            except BlobStoreError as exc:
                logger.warning("could not sweep abandoned upload %s: %s", upload.id, exc)
                continue
            await execute(conn, "delete_upload", upload_id=upload.id)
            swept += 1
    return swept


async def grant_withdrawn(runtime: Runtime, key: str) -> bool:
    """Whether the upload grant for ``key`` was withdrawn (its document was deleted)."""
    async with connection(runtime.pool) as conn:
        row = await fetch_one(conn, "fetch_upload_revocation", object_key=key)
    return row is not None and row["revoked_at"] is not None


def _remove_upload_bytes(store: BlobStore, upload: Upload) -> None:
    if upload.multipart_id is not None and isinstance(store, MultipartBlobStore):
        store.abort_multipart_upload(upload.object_key, upload.multipart_id)
    store.delete(upload.object_key)
