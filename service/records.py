"""Frozen records built from database rows; rows are never handed out as they are."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal, Self
from uuid import UUID


@dataclass(frozen=True, slots=True)
class User:
    id: UUID
    name: str
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(id=row["id"], name=row["name"], created_at=row["created_at"])


TokenScope = Literal["read", "write"]
"""What an API token may do: ``read`` searches, lists and reads; ``write`` may also change the
user's projects (the rule: :func:`service.services.scopes.require_write`)."""


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the user behind a live API token, and what that token may do."""

    user_id: UUID
    user_name: str
    token_id: UUID
    scope: TokenScope = "write"
    """A local command acting for a user directly (``--user``) may write."""

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(
            user_id=row["user_id"],
            user_name=row["user_name"],
            token_id=row["token_id"],
            scope=row["scope"],
        )


@dataclass(frozen=True, slots=True)
class ApiToken:
    id: UUID
    prefix: str
    label: str
    scope: TokenScope
    created_at: datetime
    revoked_at: datetime | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(
            id=row["id"],
            prefix=row["prefix"],
            label=row["label"],
            scope=row["scope"],
            created_at=row["created_at"],
            revoked_at=row["revoked_at"],
        )


@dataclass(frozen=True, slots=True)
class Project:
    id: UUID
    name: str
    created_at: datetime
    document_count: int = 0
    ready_count: int = 0

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(
            id=row["id"],
            name=row["name"],
            created_at=row["created_at"],
            document_count=row.get("document_count", 0),
            ready_count=row.get("ready_count", 0),
        )


@dataclass(frozen=True, slots=True)
class Upload:
    """An upload grant the service issued, and what it allows."""

    id: UUID
    project_id: UUID
    user_id: UUID
    filename: str
    content_type: str
    size_bytes: int
    object_key: str
    expires_at: datetime
    consumed_at: datetime | None
    multipart_id: str | None
    """Set when the file goes to an S3 store in parts."""
    part_size_bytes: int | None
    """The part size the multipart grant planned."""

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(
            id=row["id"],
            project_id=row["project_id"],
            user_id=row["user_id"],
            filename=row["filename"],
            content_type=row["content_type"],
            size_bytes=row["size_bytes"],
            object_key=row["object_key"],
            expires_at=row["expires_at"],
            consumed_at=row["consumed_at"],
            multipart_id=row["multipart_id"],
            part_size_bytes=row["part_size_bytes"],
        )


@dataclass(frozen=True, slots=True)
class SyncedFile:
    """The file a document mirrors (``shortlist sync``), as the last sync saw it."""

    path: str
    """Where the file is, under the synced folder, ``/``-separated."""
    sha256: str | None
    """The SHA-256 of the original's bytes."""
    size: int | None
    mtime_ns: int | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> SyncedFile | None:
        if row.get("sync_path") is None:
            return None
        return cls(
            path=row["sync_path"],
            sha256=row.get("original_sha256"),
            size=row.get("sync_size"),
            mtime_ns=row.get("sync_mtime_ns"),
        )


@dataclass(frozen=True, slots=True)
class Document:
    """A document's metadata; its Markdown is loaded only where it is needed."""

    id: UUID
    project_id: UUID
    name: str
    content_type: str
    size_bytes: int
    object_key: str | None
    status: str
    error_code: str | None
    error_message: str | None
    kind: str | None
    page_count: int | None
    pages_done: int | None
    """While extracting: pages read so far (None until the extractor knows the page count)."""
    pages_total: int | None
    """While extracting: the pages the document has (None until known)."""
    content_hash: str | None
    warnings: tuple[str, ...]
    created_at: datetime
    extracted_at: datetime | None
    ocr_pages: tuple[int, ...] = ()
    """Pages whose text was recognised from images (OCR)."""
    sync: SyncedFile | None = None
    """The file this document mirrors, when ``shortlist sync`` made it."""
    queued_ahead: int | None = None
    """While pending: extractions being done or queued before this one (None when not read)."""

    @property
    def searchable(self) -> bool:
        return self.status == "ready"

    @property
    def has_original(self) -> bool:
        """Whether the blob store holds its original: not for an import whose fetch has not
        stored any bytes (yet, or ever; uploads are never empty)."""
        return self.object_key is not None and self.size_bytes > 0

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(
            id=row["id"],
            project_id=row["project_id"],
            name=row["name"],
            content_type=row["content_type"],
            size_bytes=row["size_bytes"],
            object_key=row["object_key"],
            status=row["status"],
            error_code=row["error_code"],
            error_message=row["error_message"],
            kind=row["kind"],
            page_count=row["page_count"],
            pages_done=row["pages_done"],
            pages_total=row["pages_total"],
            content_hash=row["content_hash"],
            warnings=tuple(row["warnings"] or ()),
            created_at=row["created_at"],
            extracted_at=row["extracted_at"],
            ocr_pages=tuple(row.get("ocr_pages") or ()),
            sync=SyncedFile.from_row(row),
            queued_ahead=row.get("queued_ahead"),
        )


@dataclass(frozen=True, slots=True)
class DocumentRequest:
    """A document an assistant asked for; approving it with an address imports it."""

    id: UUID
    project_id: UUID
    title: str
    source_url: str | None
    reason: str
    status: str
    times_requested: int
    document_id: UUID | None
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(
            id=row["id"],
            project_id=row["project_id"],
            title=row["title"],
            source_url=row["source_url"],
            reason=row["reason"],
            status=row["status"],
            times_requested=row["times_requested"],
            document_id=row["document_id"],
            created_at=row["created_at"],
            updated_at=row["updated_at"],
        )
