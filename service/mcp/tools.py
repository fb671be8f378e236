"""The tools' work: resolve names, call the same services as REST, shape the result.

Every function here takes a :class:`~service.mcp.caller.Caller` and returns a
``CallToolResult``. Errors a user can act on (no such project, document not
ready, empty query…) come back as ``isError`` results carrying the service's
own message and code, so the model can correct itself and try again.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ParamSpec

import msgspec
from mcp_types import CallToolResult, TextContent

from extract.page_markers import find_page_markers
from service.errors import ShortlistError, as_shortlist_error
from service.mcp import pictures, render
from service.mcp.caller import Caller, resolve_project
from service.records import Document
from service.services import document_requests as requests_service
from service.services import documents as documents_service
from service.services import imports as imports_service
from service.services import mentions as mentions_service
from service.services import page_images, text_documents
from service.services import search as search_service
from service.services.search import ProjectSearch
from service.shapes import SearchResponse
from service.storage.db import connection

P = ParamSpec("P")

#: Most characters of Markdown one read_document call returns.
MAX_READ_CHARS = 20_000


def text_result(text: str, structured: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def error_result(error: ShortlistError) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=f"{error.message} (error: {error.code})")],
        structured_content={"error": {"code": error.code, "message": error.message}},
        is_error=True,
    )


def reports_errors(
    tool: Callable[P, Awaitable[CallToolResult]],
) -> Callable[P, Awaitable[CallToolResult]]:
    """Turn any error that knows its status and code into an ``isError`` result."""

    @functools.wraps(tool)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> CallToolResult:
        try:
            return await tool(*args, **kwargs)
        except Exception as exc:
            error = as_shortlist_error(exc)
            if error is None:
                raise
            return error_result(error)

    return wrapper


# --- tools ---------------------------------------------------------------------


@reports_errors
async def search_documents(
    caller: Caller,
    query: str,
    project: str | None = None,
    top_k: int | None = None,
    documents: Sequence[str] | None = None,
    images: pictures.ImageMode = "figures",
) -> CallToolResult:
    """The search's text, the links to each result's page and original, then the pictures
    ``images`` asks for (each named by its result number)."""
    found = await search_service.search_project(
        caller.runtime,
        caller.principal,
        caller.project_named(project),
        query,
        top_k=top_k,
        documents=documents,
    )
    blocks: list[pictures.Block] = [TextContent(type="text", text=render.search_text(found))]
    if links := await pictures.result_links(caller, found):
        blocks.append(TextContent(type="text", text=links))
    if images != "none":
        draw = pictures.passage_pictures if images == "passages" else pictures.figure_pictures
        drawn, notes = await draw(caller, found)
        blocks.extend(pictures.picture_blocks(drawn, notes))
    return CallToolResult(content=blocks, structured_content=search_structured(found))


@reports_errors
async def show_page(
    caller: Caller,
    document: str,
    page: int,
    highlight: str | None = None,
    project: str | None = None,
) -> CallToolResult:
    """One page of a document as a picture (at most the model's size), ``highlight`` (a
    result's ``chunk_id``) marked on it, with links to the page image and the original."""
    async with connection(caller.runtime.pool) as conn:
        found = await documents_service.find_document(
            conn, caller.principal, document, caller.project_named(project)
        )
    drawn = await page_images.page_image(
        caller.runtime,
        caller.principal,
        found.id,
        page,
        passage=highlight,
        max_side=pictures.MODEL_LONG_EDGE,
    )
    image_url = caller.runtime.settings.public_url + page_images.page_image_path(
        found.id, page, passage=highlight
    )
    async with connection(caller.runtime.pool) as conn:
        original = await documents_service.download_url(
            caller.runtime, conn, caller.principal, found.id
        )
    label = f"{found.name} — p. {page} of {found.page_count or 1}"
    if drawn.covered is not None:
        label += f", the passage marked ({drawn.covered:.0%} of its words found on this page)"
    links = f"[page image]({image_url}) · [the original at p. {page}]({original}#page={page})"
    structured = {
        "document": {"id": str(found.id), "name": found.name},
        "page": page,
        "page_count": found.page_count or 1,
        "covered": drawn.covered,
        "page_image_url": image_url,
        "original_url": f"{original}#page={page}",
    }
    picture = pictures.Picture(label, drawn.png)
    blocks = pictures.picture_blocks([picture], [links])
    return CallToolResult(content=blocks, structured_content=structured)


def search_structured(found: ProjectSearch) -> dict[str, Any]:
    """The search's structured content: REST's :class:`~service.shapes.SearchResponse`, without
    each passage's ``text`` (the model reads it once, in the tool's text)."""
    body: dict[str, Any] = msgspec.to_builtins(SearchResponse.from_search(found))
    for hit in body["results"]:
        del hit["text"]
    return body


@reports_errors
async def list_documents(caller: Caller, project: str | None = None) -> CallToolResult:
    async with connection(caller.runtime.pool) as conn:
        target = await resolve_project(conn, caller, project)
        found = await documents_service.list_documents(conn, caller.principal, target.id)
    structured = {
        "project": {"id": str(target.id), "name": target.name},
        "documents": [document_entry(document) for document in found],
    }
    return text_result(render.documents_text(target, found), structured)


def document_entry(document: Document) -> dict[str, Any]:
    failure = documents_service.failure_of(document)
    return {
        "id": str(document.id),
        "name": document.name,
        "status": document.status,
        "searchable": document.searchable,
        "page_count": document.page_count,
        "ocr_pages": list(document.ocr_pages),
        "error": None if failure is None else failure._asdict(),
    }


@reports_errors
async def read_document(
    caller: Caller, document: str, pages: int | str | None = None, project: str | None = None
) -> CallToolResult:
    span = documents_service.parse_pages(None if pages is None else str(pages))
    async with connection(caller.runtime.pool) as conn:
        found = await documents_service.find_document(
            conn, caller.principal, document, caller.project_named(project)
        )
        documents_service.require_searchable(found)
        text = await documents_service.read_text(
            conn, caller.principal, found.id, span, max_chars=MAX_READ_CHARS
        )
    markdown, last, continue_at = _cut_at_page(text)
    total = found.page_count or 1
    header = f"# {found.name} — {render.page_span((text.first_page, last))} of {total}"
    parts = [header, "", markdown.strip()]
    follow: str | None = None
    if continue_at is not None and continue_at > last:
        follow = render.page_range(continue_at, text.last_page)
        parts.append(
            f"\n… truncated at {MAX_READ_CHARS:,} characters; "
            f"call read_document with pages={follow} to continue."
        )
    elif continue_at is not None:
        parts.append(
            f"\n… truncated: page {continue_at} alone is longer than {MAX_READ_CHARS:,} "
            "characters and only its beginning is shown; use search_documents to find "
            "passages further into it."
        )
    structured = {
        "document": {"id": str(found.id), "name": found.name},
        "pages": [text.first_page, last],
        "page_count": total,
        "truncated": continue_at is not None,
        "continue_pages": follow,
    }
    return text_result("\n".join(parts), structured)


def _cut_at_page(text: documents_service.DocumentText) -> tuple[str, int, int | None]:
    """Markdown ending at a page boundary, the last page it holds whole, and where to go on.

    When the read was truncated the partial last page is dropped (if a whole page
    precedes it) so the continuation starts exactly where this one stops.
    """
    if not text.truncated:
        return text.markdown, text.last_page, None
    markers = find_page_markers(text.markdown)
    if len(markers) >= 2:
        partial = markers[-1]
        return text.markdown[: partial.start], partial.page - 1, partial.page
    return text.markdown, text.first_page, text.first_page


@reports_errors
async def find_mentions(
    caller: Caller, terms: Sequence[str], project: str | None = None, match: str = "all"
) -> CallToolResult:
    found = await mentions_service.find_mentions(
        caller.runtime, caller.principal, caller.project_named(project), terms, match
    )
    target = found.project
    structured = {
        "project": {"id": str(target.id), "name": target.name},
        "terms": list(found.terms),
        "match": found.match,
        "documents_searched": found.documents_searched,
        "documents_not_searchable": found.documents_not_searchable,
        "documents": [
            {
                "id": str(document.document_id),
                "name": document.document_name,
                "counts": {term.term: term.occurrences for term in document.terms},
                "pages": {term.term: list(term.pages) for term in document.terms},
            }
            for document in found.documents
        ],
        "totals": [total._asdict() for total in found.totals],
    }
    return text_result(render.mentions_text(found), structured)


async def documents_resource(caller: Caller, project: str) -> str:
    """The text of ``shortlist://projects/{project}/documents``; errors are raised."""
    async with connection(caller.runtime.pool) as conn:
        target = await resolve_project(conn, caller, project)
        found = await documents_service.list_documents(conn, caller.principal, target.id)
    return render.documents_text(target, found)


# --- write tools -----------------------------------------------------------------


@reports_errors
async def add_document(
    caller: Caller, name: str, content: str, project: str | None = None
) -> CallToolResult:
    async with connection(caller.runtime.pool) as conn:
        target = await resolve_project(conn, caller, project)
    added = await text_documents.add_text_document(
        caller.runtime, caller.principal, project_id=target.id, name=name, content=content
    )
    document = added.document
    structured = {
        "project": {"id": str(target.id), "name": target.name},
        "document": document_entry(document),
    }
    if not document.searchable:
        failure = documents_service.failure_of(document)
        code = f" (error: {failure.code})" if failure else ""
        reason = documents_service.unsearchable_reason(document)
        text = f"Stored {document.name!r} in project {target.name!r}, but it is {reason}.{code}"
        return CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content=structured,
            is_error=True,
        )
    pages = document.page_count or 1
    text = (
        f"Added {document.name!r} to project {target.name!r} ({pages} page(s)); it is "
        "searchable now with search_documents and readable with read_document."
    )
    return text_result(text, structured)


@reports_errors
async def import_url(
    caller: Caller, url: str, project: str | None = None, filename: str | None = None
) -> CallToolResult:
    async with connection(caller.runtime.pool) as conn:
        target = await resolve_project(conn, caller, project)
    # The address's DNS lookup holds no connection; the import takes one after it.
    document = await imports_service.import_url(
        caller.runtime, caller.principal, project_id=target.id, url=url, filename=filename
    )
    structured = {
        "project": {"id": str(target.id), "name": target.name},
        "document": document_entry(document),
    }
    text = (
        f"Import of {url.strip()} queued as {document.name!r} in project {target.name!r} "
        "(pending). It is fetched and extracted in the background and is not searchable yet; "
        "call list_documents to see when it is ready or why it failed."
    )
    return text_result(text, structured)


@reports_errors
async def request_document(
    caller: Caller,
    title: str,
    source_url: str | None = None,
    reason: str | None = None,
    project: str | None = None,
) -> CallToolResult:
    async with connection(caller.runtime.pool) as conn:
        target = await resolve_project(conn, caller, project)
        logged = await requests_service.request_document(
            caller.runtime,
            conn,
            caller.principal,
            project_id=target.id,
            title=title,
            source_url=source_url,
            reason=reason,
        )
    request = logged.request
    structured = {
        "project": {"id": str(target.id), "name": target.name},
        "request": {
            "id": str(request.id),
            "title": request.title,
            "source_url": request.source_url,
            "status": request.status,
            "times_requested": request.times_requested,
            "joined_existing": logged.joined,
        },
    }
    asked = (
        f"joined the existing request, now asked for {request.times_requested} times"
        if logged.joined
        else "a new request"
    )
    text = (
        f"Logged a request for {request.title!r} in project {target.name!r} ({asked}). "
        "The document is NOT in the project and nothing was fetched: the project's owner "
        "reviews requests and may import it later. Do not cite it or claim to have read it; "
        "tell the user it has been requested."
    )
    return text_result(text, structured)
