"""Documents: list, read, open, delete and re-extract a user's own."""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING, NamedTuple, cast
from uuid import UUID

import anyio.to_thread

from extract import KIND_CONTENT_TYPES, Kind
from extract.markdown import page_ranges
from extract.page_markers import slice_pages
from service.errors import DocumentNotFound, DocumentNotReady, InvalidPageRange
from service.records import Document, Principal, Project
from service.services import projects, scopes
from service.services.filenames import file_part
from service.storage.blobs.disposition import Disposition
from service.storage.db import Connection, connection, fetch_all, fetch_one

if TYPE_CHECKING:
    from service.runtime import Runtime

logger = logging.getLogger(__name__)

#: What a person can do about each reason a document is not searchable.
HINTS = {
    # Only what a code's message does not already say: the panel, MCP and the CLI show the
    # message and then the hint, so a hint repeating the message's remedy reads twice.
    "scanned_pdf": "Upload a clearer scan, or a version with a text layer.",
    "corrupt_document": "Then upload it again.",
    "empty_document": "If it should have text, check that it opens in its own program, then upload it again.",
    "extraction_timeout": "Or re-extract it to try again, in case the machine was busy.",
}


#: The code of a failed document that recorded none (a job that kept failing).
DEFAULT_ERROR_CODE = "extraction_failed"


class DocumentFailure(NamedTuple):
    """Why a document cannot be searched: a stable code, the message, what to do."""

    code: str
    message: str
    hint: str | None


def failure_of(document: Document) -> DocumentFailure | None:
    """The failure every door shows for a document in ``error``; None for any other status."""
    if document.status != "error":
        return None
    code = document.error_code or DEFAULT_ERROR_CODE
    return DocumentFailure(code, document.error_message or "", HINTS.get(code))


def ocr_note(document: Document) -> str | None:
    """``"text recognised from images on pages 3-9"`` for a document with OCR'd pages, else None."""
    if not document.ocr_pages:
        return None
    pages = page_ranges(sorted(document.ocr_pages))
    word = "page" if len(document.ocr_pages) == 1 else "pages"
    return f"text recognised from images on {word} {pages}"


def not_searchable_count(project: Project, searched: int) -> int:
    """How many of the project's documents a search or scan that covered ``searched`` ready
    documents had to leave out (pending, extracting or failed); what every door reports as
    ``documents_not_searchable``."""
    return max(0, project.document_count - searched)


class DocumentText(NamedTuple):
    document: Document
    first_page: int
    last_page: int
    markdown: str
    truncated: bool


async def list_documents(
    conn: Connection, principal: Principal, project_id: UUID
) -> list[Document]:
    await projects.get_project(conn, principal.user_id, project_id)
    rows = await fetch_all(conn, "list_documents", project_id=project_id, user_id=principal.user_id)
    return [Document.from_row(row) for row in rows]


async def get_document(conn: Connection, principal: Principal, document_id: UUID) -> Document:
    row = await fetch_one(
        conn, "fetch_document", document_id=document_id, user_id=principal.user_id
    )
    if row is None:
        raise DocumentNotFound()
    return Document.from_row(row)


def parse_pages(text: str | None) -> tuple[int, int] | None:
    """``"3"`` → (3, 3), ``"3-5"`` → (3, 5); None for no range."""
    if text is None or not text.strip():
        return None
    match = re.fullmatch(r"\s*(\d{1,6})\s*(?:-\s*(\d{1,6})\s*)?", text)
    if match is None:
        raise InvalidPageRange(f"Pages must look like 3 or 3-5, not {text!r}.")
    first = int(match[1])
    last = int(match[2] or match[1])
    if first < 1 or last < first:
        raise InvalidPageRange(f"The page range {text!r} is empty or starts before page 1.")
    return first, last


async def read_text(
    conn: Connection,
    principal: Principal,
    document_id: UUID,
    pages: tuple[int, int] | None = None,
    *,
    max_chars: int | None = None,
) -> DocumentText:
    """A ready document's Markdown, whole or for a page range, optionally bounded in size."""
    document = await get_document(conn, principal, document_id)
    if not document.searchable:
        raise DocumentNotReady(_not_ready_message(document))
    row = await fetch_one(
        conn, "fetch_document_text", document_id=document_id, user_id=principal.user_id
    )
    if row is None or row["markdown"] is None:
        raise DocumentNotReady(_not_ready_message(document))
    page_count = document.page_count or 1
    first, last = pages or (1, page_count)
    if first > page_count:
        raise InvalidPageRange(
            f"The document has {page_count} page(s); page {first} does not exist."
        )
    last = min(last, page_count)
    markdown = slice_pages(row["markdown"], first, last)
    truncated = max_chars is not None and len(markdown) > max_chars
    if truncated and max_chars is not None:
        markdown = markdown[:max_chars]
    return DocumentText(document, first, last, markdown, truncated)


def _not_ready_message(document: Document) -> str:
    if document.status == "error":
        return f"{document.name!r} cannot be searched: {document.error_message}"
    return f"{document.name!r} is still being extracted ({document.status}); try again shortly."


class Presentation(NamedTuple):
    """How an original is served: its type and its ``Content-Disposition``."""

    content_type: str
    disposition: Disposition


UNKNOWN_ORIGINAL = Presentation("application/octet-stream", "attachment")
"""An original whose kind extraction has not (or could not) establish: bytes to save."""

INLINE_KINDS: frozenset[Kind] = frozenset({"pdf"})
"""Kinds a browser may display in place (the panel's ``#page=N`` links open PDFs);
every other original is a download."""


def presentation(kind: str | None) -> Presentation:
    """How to serve an original of ``kind`` (what extraction found in its bytes, never
    what the uploader declared): the kind's own media type, inline only for PDFs."""
    if kind not in KIND_CONTENT_TYPES:
        return UNKNOWN_ORIGINAL
    known = cast("Kind", kind)
    return Presentation(
        KIND_CONTENT_TYPES[known], "inline" if known in INLINE_KINDS else "attachment"
    )


async def download_url(
    runtime: Runtime, conn: Connection, principal: Principal, document_id: UUID
) -> str:
    """A short-lived link to the original: a PDF opens inline (``#page=N`` works), any
    other kind downloads, always under the type of the kind its bytes were found to be, and
    under the file's own name (a browser saves a file, not the folders in a document's name)."""
    document = await get_document(conn, principal, document_id)
    if document.object_key is None or not document.has_original:
        raise DocumentNotFound(
            "This document has no original to open: its import did not fetch one."
            if document.object_key is not None
            else "The original of this document was not kept."
        )
    key = document.object_key
    served = presentation(document.kind)
    return await anyio.to_thread.run_sync(
        lambda: runtime.blobs.download_url(
            key,
            filename=file_part(document.name),
            content_type=served.content_type,
            disposition=served.disposition,
            expires_in=runtime.settings.storage.download_expiry_seconds,
        )
    )


async def delete_document(runtime: Runtime, principal: Principal, document_id: UUID) -> None:
    """Remove the row, then the original. Deleting what is not there (or not yours) is a no-op.

    The row goes on a short-lived connection, given back before the blob store is asked to
    delete (a slow store must not hold a pooled connection)."""
    scopes.require_write(principal)
    async with connection(runtime.pool) as conn:
        row = await fetch_one(
            conn, "delete_document", document_id=document_id, user_id=principal.user_id
        )
    if row is None or row["object_key"] is None:
        return
    try:
        await anyio.to_thread.run_sync(runtime.blobs.delete, row["object_key"])
    except Exception:
        # The row is gone, so the document is gone for every reader; an orphaned
        # original is only storage, and is logged for the operator.
        logger.warning(
            "could not delete the original of document %s at %s", document_id, row["object_key"]
        )


async def reextract(
    runtime: Runtime, conn: Connection, principal: Principal, document_id: UUID
) -> Document:
    """Extract a document again from its original (after a fix, or a failure)."""
    scopes.require_write(principal)
    await get_document(conn, principal, document_id)
    row = await fetch_one(
        conn, "reset_document_for_extraction", document_id=document_id, user_id=principal.user_id
    )
    if row is None:
        raise DocumentNotFound(
            "The original of this document was not kept, so it cannot be re-extracted."
        )
    await runtime.jobs.enqueue_extraction(document_id)
    return await get_document(conn, principal, document_id)


# --- naming documents ----------------------------------------------------------


async def find_document(
    conn: Connection,
    principal: Principal,
    reference: UUID | str,
    project: Project | UUID | str | None,
) -> Document:
    """A document by id (in any of the user's projects) or by its exact name in a project.

    ``project`` is a project already resolved, or what the caller named: an id, a name, or
    None for :func:`projects.resolve_project`'s default. A project is needed only to look up a
    name, so for an id the default is never resolved (a user with several projects and none
    named "default" still finds a document by id); a project the caller names is resolved,
    so a misspelt one says so.
    """
    target = project if isinstance(project, Project) else None
    if isinstance(project, UUID) or (isinstance(project, str) and project.strip()):
        target = await projects.resolve_project(conn, principal.user_id, project)
    if isinstance(reference, UUID):
        try:
            return await get_document(conn, principal, reference)
        except DocumentNotFound:
            raise DocumentNotFound(
                f"No document with id {reference}.", document=str(reference)
            ) from None
    reference = reference.strip()
    try:
        document_id = UUID(reference)
    except ValueError:
        pass
    else:
        try:
            return await get_document(conn, principal, document_id)
        except DocumentNotFound:
            if target is None:
                raise DocumentNotFound(
                    f"No document with id {reference!r}.", document=reference
                ) from None
    if target is None:
        target = await projects.resolve_project(conn, principal.user_id, None)
    if "\x00" in reference:  # no name holds NUL, and PostgreSQL refuses it as a parameter
        raise DocumentNotFound(
            f"Project {target.name!r} has no document named {reference!r}.", document=reference
        )
    row = await fetch_one(conn, "fetch_document_by_name", project_id=target.id, name=reference)
    if row is None:
        raise DocumentNotFound(
            f"Project {target.name!r} has no document named {reference!r}; "
            "list the project's documents for the exact names.",
            document=reference,
        )
    return await get_document(conn, principal, row["id"])


def unsearchable_reason(document: Document) -> str:
    """Why a document cannot be searched yet, and what to do about it."""
    failure = failure_of(document)
    if failure is not None:
        reason = failure.message or failure.code
        return f"not searchable: {reason}" + (f" — {failure.hint}" if failure.hint else "")
    return f"{document.status}: still being extracted; try again shortly"


def require_searchable(document: Document) -> None:
    """Raise DocumentNotReady, saying why, unless the document can be searched."""
    if not document.searchable:
        reason = unsearchable_reason(document).rstrip(". ")  # one full stop, not two
        raise DocumentNotReady(f"{document.name!r} is {reason}.", document=str(document.id))
