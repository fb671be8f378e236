"""The shapes the REST API speaks: one struct per verb, never a raw row."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

import msgspec

from service.records import Project as ProjectRecord

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
