"""Documents an assistant asked for: logged, listed for the owner, approved into an import.

:func:`request_document` is what the MCP tool ``request_document`` calls. It never fetches
anything (an assistant's address is only remembered, not checked against the network); it
caps every field, joins a pending request with the same title instead of logging a twin, and
refuses a new title once the project holds ``requests.max_pending_per_project`` pending ones.
The owner sees them (:func:`list_requests`) and approves one with an address
(:func:`approve_request`), which runs the checks and the insert of
:func:`service.services.imports.import_url` — every check of a URL import applies to it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import urlsplit
from uuid import UUID

from service.errors import (
    DocumentRequestAlreadyApproved,
    DocumentRequestNotFound,
    InvalidRequest,
    TooManyDocumentRequests,
)
from service.records import Document, DocumentRequest, Principal
from service.services import imports, projects, scopes
from service.services.filenames import unsafe_characters
from service.services.url_fetch import MAX_URL_LENGTH
from service.storage.db import Connection, connection, execute, fetch_all, fetch_one

if TYPE_CHECKING:
    from service.runtime import Runtime

#: Longest title a request may have (the column's CHECK says the same).
MAX_TITLE_CHARS = 300
#: Longest reason a request may give (the column's CHECK says the same).
MAX_REASON_CHARS = 2000


class Logged(NamedTuple):
    request: DocumentRequest
    joined: bool
    """True when the title matched a pending request, which now counts one more ask."""


def _field(value: str | None, name: str, limit: int) -> str:
    text = (value or "").strip()
    if "\x00" in text:
        raise InvalidRequest(f"The {name} may not contain NUL characters.", field=name)
    if len(text) > limit:
        raise InvalidRequest(
            f"The {name} is {len(text)} characters long; at most {limit} are kept, so shorten it.",
            field=name,
        )
    return text


def _source_url(value: str | None) -> str | None:
    """An address to remember, checked only for its shape: nothing is fetched here."""
    url = _field(value, "source_url", MAX_URL_LENGTH)
    if not url:
        return None
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise InvalidRequest(
            "The source_url must be an http:// or https:// address, or be left out.",
            field="source_url",
        )
    return url


async def request_document(
    runtime: Runtime,
    conn: Connection,
    principal: Principal,
    *,
    project_id: UUID,
    title: str,
    source_url: str | None = None,
    reason: str | None = None,
) -> Logged:
    """Log that a document is wanted in the caller's project (or count one more ask for it)."""
    scopes.require_write(principal)
    await projects.get_project(conn, principal.user_id, project_id)
    clean_title = _field(title, "title", MAX_TITLE_CHARS)
    if not clean_title:
        raise InvalidRequest(
            "Say which document is wanted: the title may not be empty.", field="title"
        )
    if problem := unsafe_characters(clean_title):
        raise InvalidRequest(f"The title contains {problem}; write it plainly.", field="title")
    url = _source_url(source_url)
    clean_reason = _field(reason, "reason", MAX_REASON_CHARS)
    row = await fetch_one(
        conn,
        "join_pending_document_request",
        project_id=project_id,
        title=clean_title,
        source_url=url,
    )
    if row is not None:
        return Logged(DocumentRequest.from_row(row), joined=True)
    limit = runtime.settings.requests.max_pending_per_project
    row = await fetch_one(
        conn,
        "insert_document_request",
        project_id=project_id,
        title=clean_title,
        source_url=url,
        reason=clean_reason,
        max_pending=limit,
    )
    if row is None:
        raise TooManyDocumentRequests(
            f"This project already has {limit} pending document requests; no more can be "
            "logged until its owner approves some. Tell the user which document you need instead."
        )
    request = DocumentRequest.from_row(row)
    return Logged(request, joined=request.times_requested > 1)


async def list_requests(
    conn: Connection, principal: Principal, project_id: UUID
) -> list[DocumentRequest]:
    """A project's requests, pending ones first."""
    await projects.get_project(conn, principal.user_id, project_id)
    rows = await fetch_all(
        conn, "list_document_requests", project_id=project_id, user_id=principal.user_id
    )
    return [DocumentRequest.from_row(row) for row in rows]


class Approved(NamedTuple):
    request: DocumentRequest
    document: Document


async def approve_request(
    runtime: Runtime,
    principal: Principal,
    *,
    project_id: UUID,
    request_id: UUID,
    url: str,
    filename: str | None = None,
) -> Approved:
    """Approve a pending request by importing ``url`` into the project.

    A stranger's project or request is refused first; then the address is checked, holding
    no pooled connection (its DNS lookup may be slow). Then the request is claimed, so two
    approvals cannot import twice; if the import is refused (duplicate name…) the request
    goes back to pending and the refusal is raised.
    """
    scopes.require_write(principal)
    async with connection(runtime.pool) as conn:
        await projects.get_project(conn, principal.user_id, project_id)
        row = await fetch_one(
            conn,
            "fetch_document_request",
            request_id=request_id,
            project_id=project_id,
            user_id=principal.user_id,
        )
    if row is None:
        raise DocumentRequestNotFound()
    checked = await imports.check_import(runtime, principal, url)
    async with connection(runtime.pool) as conn:
        claimed = await fetch_one(
            conn,
            "claim_document_request_for_approval",
            request_id=request_id,
            project_id=project_id,
        )
        if claimed is None:
            raise DocumentRequestAlreadyApproved()
        try:
            document = await imports.create_import(
                runtime, conn, principal, checked, project_id=project_id, filename=filename
            )
        except Exception:
            await execute(conn, "release_document_request", request_id=request_id)
            raise
        linked = await fetch_one(
            conn, "link_document_request", request_id=request_id, document_id=document.id
        )
    assert linked is not None
    return Approved(DocumentRequest.from_row(linked), document)
