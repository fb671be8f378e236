"""The shapes the REST API speaks: one struct per verb, never a raw row."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

import msgspec

from retrieval.rerankers import RerankerKind
from service.records import Document as DocumentRecord
from service.records import Principal, SyncedFile, TokenScope
from service.records import Project as ProjectRecord
from service.services.documents import failure_of
from service.services.filenames import MAX_NAME_LENGTH
from service.services.health import Probe
from service.services.synced_files import MAX_FILE_NUMBER, MAX_SYNC_PATH_LENGTH
from service.shapes import DocumentName as DocumentName
from service.shapes import Struct as Struct

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
FileName = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_NAME_LENGTH)]
"""A document's name as a client sends it (a path under a folder included); the rest of the
rule is :func:`service.services.filenames.clean_filename`'s."""


class Check(Struct):
    ok: bool
    detail: str

    @classmethod
    def of(cls, probe: Probe) -> Check:
        return cls(ok=probe.ok, detail=probe.detail)


class RerankerCheck(Struct):
    ok: bool
    kind: RerankerKind
    detail: str


class WarmupCheck(Struct):
    """The background warm-up of this process's search caches, all projects together."""

    projects_warming: int
    passages_warm: int
    passages_total: int


class Health(Struct):
    status: Literal["ok", "degraded", "unavailable"]
    database: Check
    blob_store: Check
    reranker: RerankerCheck
    warmup: WarmupCheck


class Liveness(Struct):
    status: Literal["alive"]


class Readiness(Struct):
    status: Literal["ready", "unavailable"]
    database: Check
    blob_store: Check


class ProjectWarmup(Struct):
    """How warm one project's search caches are in the process that answered."""

    project_id: UUID
    state: Literal["cold", "queued", "warming", "warm"]
    passages_warm: int
    passages_total: int
    """0 until the warm-up has reached the project."""


class Status(Struct):
    projects: list[ProjectWarmup]


class Project(Struct):
    id: UUID
    name: str
    created_at: datetime
    document_count: int
    ready_count: int

    @classmethod
    def from_record(cls, record: ProjectRecord) -> Project:
        return cls(
            id=record.id,
            name=record.name,
            created_at=record.created_at,
            document_count=record.document_count,
            ready_count=record.ready_count,
        )


class ProjectCreate(Struct):
    name: Name


class ProjectList(Struct):
    projects: list[Project]


class Me(Struct):
    id: UUID
    name: str
    scope: Annotated[
        TokenScope,
        msgspec.Meta(
            description=(
                "What the presented token may do: read (search, list, read) or write (also "
                "upload, import, delete, re-extract, create projects, log and approve requests)."
            )
        ),
    ]

    @classmethod
    def of(cls, principal: Principal) -> Me:
        return cls(id=principal.user_id, name=principal.user_name, scope=principal.scope)


# --- uploads and documents ----------------------------------------------------


class UploadRequest(Struct):
    project_id: UUID
    filename: FileName
    size: Annotated[int, msgspec.Meta(ge=0)]
    content_type: Annotated[str, msgspec.Meta(max_length=200)] | None = None
    replaces: Annotated[
        UUID | None,
        msgspec.Meta(
            description=(
                "A document of the project whose original this upload will replace "
                "(POST /api/documents/{document_id}/original); the file must carry its name."
            )
        ),
    ] = None


SyncPath = Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_SYNC_PATH_LENGTH)]
"""A synced file's path; the rest of the rule is :mod:`service.services.synced_files`'s."""
FileNumber = Annotated[int, msgspec.Meta(ge=0, le=MAX_FILE_NUMBER)]
"""A synced file's size or modification time (ns)."""


class SyncedFileBody(Struct):
    """The file of a synced folder a document mirrors (``shortlist sync``), as last seen."""

    path: SyncPath
    """Where the file is under the synced folder, ``/``-separated."""
    sha256: Annotated[str, msgspec.Meta(pattern="^[0-9a-f]{64}$")] | None
    """The SHA-256 of the original's bytes (hex)."""
    size: FileNumber | None
    mtime_ns: FileNumber | None

    @classmethod
    def from_record(cls, record: SyncedFile | None) -> SyncedFileBody | None:
        if record is None:
            return None
        return cls(
            path=record.path, sha256=record.sha256, size=record.size, mtime_ns=record.mtime_ns
        )

    def to_record(self) -> SyncedFile:
        return SyncedFile(
            path=self.path, sha256=self.sha256, size=self.size, mtime_ns=self.mtime_ns
        )


class ImportRequest(Struct):
    """A document to fetch from a web address into the project."""

    url: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    filename: FileName | None = None


class UploadPartBody(Struct):
    """One part of a MULTIPART upload: PUT bytes ``offset`` .. ``offset + size - 1`` of the
    file to ``url`` (the store refuses any other size); send a failed part again."""

    number: int
    offset: int
    size: int
    url: str


class UploadGrantBody(Struct):
    upload_id: UUID
    method: Literal["POST", "PUT", "MULTIPART"]
    url: str | None
    """POST and PUT: where to send the file. MULTIPART: null; each part has its URL."""
    fields: dict[str, str]
    headers: dict[str, str]
    expires_at: datetime
    parts: list[UploadPartBody]
    """MULTIPART: the parts covering the whole file, in order; empty otherwise."""


class DocumentCreate(Struct):
    project_id: UUID
    upload_id: UUID
    sync: SyncedFileBody | None = None
    """Set by ``shortlist sync``: the file the new document mirrors."""


class OriginalReplace(Struct):
    """A finished upload (granted with ``replaces``) to become a document's new original."""

    upload_id: UUID
    sync: SyncedFileBody | None = None
    """Set by ``shortlist sync``: the file as it is now."""


class SyncFollow(Struct):
    """A synced file moved, renamed or touched with the same bytes: where it is now."""

    path: SyncPath
    name: FileName
    size: FileNumber | None = None
    mtime_ns: FileNumber | None = None


class DocumentError(Struct):
    code: str
    message: str
    hint: str | None


class ExtractionProgress(Struct):
    """How far the extraction of a document being extracted has come."""

    pages_done: int
    page_count: int


class Document(Struct):
    id: UUID
    project_id: UUID
    name: str
    content_type: str
    size_bytes: int
    status: Literal["pending", "processing", "ready", "error"]
    searchable: bool
    has_original: bool
    """Whether ``GET /api/documents/{id}/file`` has an original to link to (not for an import
    whose fetch stored nothing)."""
    error: DocumentError | None
    kind: str | None
    page_count: int | None
    progress: ExtractionProgress | None
    warnings: list[str]
    created_at: datetime
    extracted_at: datetime | None
    ocr_pages: list[int]
    """Pages whose text was recognised from images (OCR); the warnings say so in words."""
    sync: SyncedFileBody | None = None
    """The file of a synced folder this document mirrors, when ``shortlist sync`` made it."""
    queued_ahead: int | None = None
    """While ``pending``: how many extractions are being done or queued before this one
    ("waiting to be extracted, N ahead"); null otherwise."""

    @classmethod
    def from_record(cls, record: DocumentRecord) -> Document:
        failure = failure_of(record)
        error = None if failure is None else DocumentError(**failure._asdict())
        return cls(
            id=record.id,
            project_id=record.project_id,
            name=record.name,
            content_type=record.content_type,
            size_bytes=record.size_bytes,
            status=record.status,  # type: ignore[arg-type]
            searchable=record.searchable,
            has_original=record.has_original,
            error=error,
            kind=record.kind,
            page_count=record.page_count,
            progress=_progress(record),
            warnings=list(record.warnings),
            created_at=record.created_at,
            extracted_at=record.extracted_at,
            ocr_pages=list(record.ocr_pages),
            sync=SyncedFileBody.from_record(record.sync),
            queued_ahead=record.queued_ahead,
        )


def _progress(record: DocumentRecord) -> ExtractionProgress | None:
    if record.status != "processing" or record.pages_done is None or record.pages_total is None:
        return None
    return ExtractionProgress(pages_done=record.pages_done, page_count=record.pages_total)


class DocumentList(Struct):
    documents: list[Document]


class DocumentTextBody(Struct):
    document: DocumentName
    pages: list[int]
    page_count: int
    markdown: str
    truncated: bool


class FileLink(Struct):
    url: str
    expires_at: datetime


# --- search ---------------------------------------------------------------------


class SearchRequest(Struct):
    query: Annotated[str, msgspec.Meta(max_length=10_000)]
    top_k: Annotated[int, msgspec.Meta(ge=1)] | None = None
    document_ids: list[UUID] | None = None
