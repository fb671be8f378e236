"""Document requests: what assistants asked for, and the owner's approval into an import."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal
from uuid import UUID

import msgspec
from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_202_ACCEPTED

from service.errors import (
    DocumentRequestAlreadyApproved,
    DocumentRequestNotFound,
    DuplicateDocumentName,
    ProjectNotFound,
    RateLimited,
    UrlNotAllowed,
    UrlUnreachable,
)
from service.http.dependencies import ConnectionDep, PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.http.schemas import Document, FileName, Struct
from service.records import DocumentRequest as DocumentRequestRecord
from service.services import document_requests


class DocumentRequest(Struct):
    id: UUID
    project_id: UUID
    title: str
    source_url: str | None
    """Where the assistant said it might be found; never fetched until an approval says so."""
    reason: str
    status: Literal["pending", "approved"]
    times_requested: int
    document_id: UUID | None
    """The document the approval imported."""
    created_at: datetime
    updated_at: datetime

    @classmethod
    def from_record(cls, record: DocumentRequestRecord) -> DocumentRequest:
        return cls(
            id=record.id,
            project_id=record.project_id,
            title=record.title,
            source_url=record.source_url,
            reason=record.reason,
            status=record.status,  # type: ignore[arg-type]
            times_requested=record.times_requested,
            document_id=record.document_id,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )


class DocumentRequestList(Struct):
    requests: list[DocumentRequest]


class ApproveRequest(Struct):
    """The address to import the requested document from."""

    url: Annotated[str, msgspec.Meta(min_length=1, max_length=2048)]
    filename: FileName | None = None


class ApprovedRequest(Struct):
    request: DocumentRequest
    document: Document


class DocumentRequestController(Controller):
    path = "/api/projects"
    tags = ["documents"]

    @operation(
        get,
        "/{project_id:uuid}/requests",
        operation_id="ListDocumentRequests",
        summary="List the documents assistants asked for",
        scope="read",
        raises=(ProjectNotFound,),
    )
    async def list_requests(
        self, conn: ConnectionDep, principal: PrincipalDep, project_id: FromPath[UUID]
    ) -> DocumentRequestList:
        """Documents assistants asked for in the project (MCP ``request_document``).

        Returns:
            Pending requests first, then approved ones, each newest first.
        """
        found = await document_requests.list_requests(conn, principal, project_id)
        return DocumentRequestList(requests=[DocumentRequest.from_record(r) for r in found])

    @operation(
        post,
        "/{project_id:uuid}/requests/{request_id:uuid}/approve",
        operation_id="ApproveDocumentRequest",
        summary="Approve a document request by importing it",
        scope="write",
        raises=(
            ProjectNotFound,
            DocumentRequestNotFound,
            DocumentRequestAlreadyApproved,
            DuplicateDocumentName,
            UrlNotAllowed,
            UrlUnreachable,
            RateLimited,
        ),
        has_body=True,
        status_code=HTTP_202_ACCEPTED,
    )
    async def approve_request(
        self,
        runtime: RuntimeDep,
        principal: PrincipalDep,
        project_id: FromPath[UUID],
        request_id: FromPath[UUID],
        data: JSONBody[ApproveRequest],
    ) -> ApprovedRequest:
        """Approve a pending request by importing ``url``, with every check of a URL import.

        Returns:
            202 with the approved request and the new (``pending``) document. A refused
            import answers its error and leaves the request pending.
        """
        # No connection is lent for the request: the address's DNS lookup comes first.
        approved = await document_requests.approve_request(
            runtime,
            principal,
            project_id=project_id,
            request_id=request_id,
            url=data.url,
            filename=data.filename,
        )
        return ApprovedRequest(
            request=DocumentRequest.from_record(approved.request),
            document=Document.from_record(approved.document),
        )
