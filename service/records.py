"""Frozen records built from database rows; rows are never handed out as they are."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Self
from uuid import UUID


@dataclass(frozen=True, slots=True)
class User:
    id: UUID
    name: str
    created_at: datetime

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(id=row["id"], name=row["name"], created_at=row["created_at"])


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling: the user behind a live API token."""

    user_id: UUID
    user_name: str
    token_id: UUID

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(user_id=row["user_id"], user_name=row["user_name"], token_id=row["token_id"])


@dataclass(frozen=True, slots=True)
class ApiToken:
    id: UUID
    prefix: str
    label: str
    created_at: datetime
    revoked_at: datetime | None

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Self:
        return cls(
            id=row["id"],
            prefix=row["prefix"],
            label=row["label"],
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
