"""The shapes the REST API speaks: one struct per verb, never a raw row."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

import msgspec

from retrieval import SearchResult
from service.records import Document as DocumentRecord
from service.records import Project as ProjectRecord
from service.services.documents import HINTS

Name = Annotated[str, msgspec.Meta(min_length=1, max_length=200)]


class Struct(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every request and response body."""


class Check(Struct):
    ok: bool
    detail: str


class RerankerCheck(Struct):
    ok: bool
    kind: Literal["cohere", "local", "none"]
    detail: str


class Health(Struct):
    status: Literal["ok", "degraded", "unavailable"]
    database: Check
    blob_store: Check
    reranker: RerankerCheck


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


# --- uploads and documents ----------------------------------------------------


class UploadRequest(Struct):
    project_id: UUID
    filename: Annotated[str, msgspec.Meta(min_length=1, max_length=1000)]
    size: Annotated[int, msgspec.Meta(ge=0)]
    content_type: Annotated[str, msgspec.Meta(max_length=200)] | None = None


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
    error: DocumentError | None
    kind: str | None
    page_count: int | None
    progress: ExtractionProgress | None
    warnings: list[str]
    created_at: datetime
    extracted_at: datetime | None

    @classmethod
    def from_record(cls, record: DocumentRecord) -> Document:
        error = None
        if record.status == "error":
            code = record.error_code or "extraction_failed"
            error = DocumentError(
                code=code, message=record.error_message or "", hint=HINTS.get(code)
            )
        return cls(
            id=record.id,
            project_id=record.project_id,
            name=record.name,
            content_type=record.content_type,
            size_bytes=record.size_bytes,
            status=record.status,  # type: ignore[arg-type]
            searchable=record.searchable,
            error=error,
            kind=record.kind,
            page_count=record.page_count,
            progress=_progress(record),
            warnings=list(record.warnings),
            created_at=record.created_at,
            extracted_at=record.extracted_at,
        )


def _progress(record: DocumentRecord) -> ExtractionProgress | None:
    if record.status != "processing" or record.pages_done is None or record.pages_total is None:
        return None
    return ExtractionProgress(pages_done=record.pages_done, page_count=record.pages_total)


class DocumentList(Struct):
    documents: list[Document]


class DocumentName(Struct):
    id: UUID
    name: str


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


class SearchHit(Struct):
    document: DocumentName
    pages: list[int]
    heading: str
    text: str
    score: float
    chunk_id: str


class SearchSource(Struct):
    document: DocumentName
    first_page: int
    pages: list[int]


class SearchResponse(Struct):
    results: list[SearchHit]
    sources: list[SearchSource]
    reranker: str
    reranked: bool
    warnings: list[str]
    candidates: int
    exhaustive: bool

    @classmethod
    def from_result(cls, result: SearchResult) -> SearchResponse:
        return cls(
            results=[
                SearchHit(
                    document=DocumentName(id=UUID(hit.document_id), name=hit.document_name),
                    pages=list(hit.pages),
                    heading=hit.heading,
                    text=hit.text,
                    score=hit.score,
                    chunk_id=hit.chunk_id,
                )
                for hit in result.hits
            ],
            sources=[
                SearchSource(
                    document=DocumentName(id=UUID(source.id), name=source.name),
                    first_page=source.first_page,
                    pages=list(source.pages),
                )
                for source in result.sources
            ],
            reranker=result.reranker,
            reranked=result.reranked,
            warnings=list(result.warnings),
            candidates=result.candidates,
            exhaustive=result.exhaustive,
        )
