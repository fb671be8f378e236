"""Page images: a page of a document's original drawn as a picture, a passage marked on it.

Every door asks :func:`page_image` (REST's ``GET /api/documents/{id}/pages/{n}/image``, the MCP
tools, ``shortlist search --open``). The rules live here, once: the caller must be able to
read the document (a read token may); only PDFs and images have pages to draw
(``no_page_image`` otherwise); the page must exist; a passage to mark is named by its id from
a search result and must be the document's; ``crop`` needs a passage. Drawing runs in a
sandbox process (:meth:`extract.SandboxPool.render`) under the extraction memory cap and
``page_images.timeout_seconds``, at most ``page_images.processes`` at a time; what is drawn
is kept in memory (``page_images.cache_mb``) by content hash, page and options. No database
connection is held while a page is drawn.

:func:`page_image_path` is the one place a page image's address is spelt.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlencode
from uuid import UUID

import anyio
import anyio.to_thread

from extract import ExtractionError, ExtractionLimits, SandboxPool, UnsupportedFormatError
from extract.locate import WordBox
from extract.page_render import MAX_WIDTH, MIN_WIDTH, PAGE_IMAGE_KINDS, RenderKind, RenderRequest
from extract.types import OcrLine
from extract.wire import from_wire
from retrieval.chunking import chunk_markdown
from service.errors import (
    DocumentNotFound,
    DocumentNotReady,
    FigureNotFound,
    InvalidRequest,
    NoPageImage,
    PageNotFound,
    PageRenderFailed,
    PassageNotFound,
)
from service.records import Document, Principal
from service.services import documents, figures
from service.services.page_image_cache import ByteBoundCache
from service.storage.blobs import BlobNotFound
from service.storage.db import Connection, connection, fetch_all, fetch_one

if TYPE_CHECKING:
    from service.runtime import Runtime
    from service.settings import Settings

MB = 1024 * 1024

CacheKey = tuple[str, int, int | None, int | None, bool, int | None, str]
"""(content hash, page, width, longest side, crop, figure, the chunk size and passage id
marked, or ``""``)."""


@dataclass(frozen=True)
class PageImage:
    """A drawn page, as every door serves it."""

    png: bytes
    width: int
    height: int
    covered: float | None
    """Share of the passage's words found on the page (None when none was asked)."""
    cropped: bool
    """True when the picture is the passage's region, not the whole page."""
    media_type: str = "image/png"

    @property
    def nbytes(self) -> int:
        return len(self.png)


def page_image_path(
    document_id: UUID | str,
    page: int,
    *,
    passage: str | None = None,
    crop: bool = False,
    figure: int | None = None,
) -> str:
    """The page image's address below the service's base URL (``/api/documents/…/image``)."""
    query: dict[str, str] = {}
    if passage is not None:
        query["highlight"] = passage
    if crop:
        query["crop"] = "passage"
    if figure is not None:
        query["figure"] = str(figure)
    path = f"/api/documents/{document_id}/pages/{page}/image"
    return f"{path}?{urlencode(query)}" if query else path


def has_page_images(kind: str | None) -> bool:
    """Whether documents of ``kind`` have pages to draw (PDFs and images)."""
    return kind in PAGE_IMAGE_KINDS


class PageImages:
    """A process's page drawing: its sandbox processes, how many draw at once, its cache."""

    def __init__(self, settings: Settings) -> None:
        options = settings.page_images
        self.processes = options.processes
        self.limits = ExtractionLimits(
            max_bytes=settings.storage.max_upload_bytes,
            memory_mb=settings.extraction.memory_mb,
            timeout_seconds=options.timeout_seconds,
        )
        self.pool = SandboxPool(0, memory_mb=settings.extraction.memory_mb, workers=self.processes)
        self.cache: ByteBoundCache[CacheKey, PageImage] = ByteBoundCache(options.cache_mb * MB)
        self._limiter: anyio.CapacityLimiter | None = None

    async def draw(self, data: bytes, request: RenderRequest) -> PageImage:
        """Draw one page in a sandbox process (waiting for a free one)."""
        if self._limiter is None:
            self._limiter = anyio.CapacityLimiter(self.processes)
        try:
            drawn = await anyio.to_thread.run_sync(
                lambda: self.pool.render(data, request, limits=self.limits),
                limiter=self._limiter,
            )
        except UnsupportedFormatError as exc:  # the original has fewer pages than recorded
            raise PageNotFound(exc.message, page=request.page) from exc
        except ExtractionError as exc:
            raise PageRenderFailed(
                f"Page {request.page} could not be drawn: {exc.message}",
                reason=exc.code,
                page=request.page,
            ) from exc
        return PageImage(drawn.png, drawn.width, drawn.height, drawn.covered, drawn.cropped)

    def close(self) -> None:
        self.pool.close()


def check_width(width: int | None) -> None:
    """Refuse a width outside :data:`~extract.page_render.MIN_WIDTH`..``MAX_WIDTH``."""
    if width is not None and not MIN_WIDTH <= width <= MAX_WIDTH:
        raise InvalidRequest(
            f"width must be between {MIN_WIDTH} and {MAX_WIDTH} pixels.", field="width"
        )


def check_page(document: Document, page: int) -> None:
    """The document must be extracted, have pages to draw, and have page ``page``."""
    if not document.searchable:
        documents.require_searchable(document)
    if not has_page_images(document.kind):
        raise NoPageImage(
            f"{document.name!r} is a {document.kind} document: only PDFs and images have page "
            "images. Read its text, or open its original.",
            kind=document.kind,
        )
    page_count = document.page_count or 1
    if not 1 <= page <= page_count:
        raise PageNotFound(
            f"{document.name!r} has {page_count} page(s); there is no page {page}.",
            page_count=page_count,
        )


def _ordinal(document: Document, passage_id: str) -> int:
    owner, _, ordinal = passage_id.rpartition(":")
    if owner != str(document.id) or not ordinal.isdigit() or len(ordinal) > 9:
        raise PassageNotFound(
            f"{passage_id!r} is not a passage of {document.name!r}; passage ids come from "
            "search results (chunk_id).",
            passage=passage_id,
        )
    return int(ordinal)


async def passage_text(
    runtime: Runtime, conn: Connection, principal: Principal, document: Document, passage_id: str
) -> str:
    """The text of the document's passage ``passage_id`` (a search result's ``chunk_id``):
    the document's Markdown chunked as search chunks it."""
    ordinal = _ordinal(document, passage_id)
    row = await fetch_one(
        conn, "fetch_document_text", document_id=document.id, user_id=principal.user_id
    )
    if row is None or row["markdown"] is None:
        raise DocumentNotReady(document=str(document.id))
    chunks = chunk_markdown(
        str(document.id), row["markdown"], chunk_size=runtime.settings.search.chunk_size
    )
    if ordinal >= len(chunks):
        raise PassageNotFound(
            f"{document.name!r} has no passage {passage_id!r} (it may have been extracted "
            "again since the search).",
            passage=passage_id,
        )
    return chunks[ordinal].text


async def page_image(
    runtime: Runtime,
    principal: Principal,
    document_id: UUID,
    page: int,
    *,
    width: int | None = None,
    passage: str | None = None,
    crop: bool = False,
    max_side: int | None = None,
    figure: int | None = None,
) -> PageImage:
    """Page ``page`` of one of the caller's documents as a PNG, ``passage`` (a chunk id)
    marked on it, cropped to that passage's region when ``crop``, or to figure ``figure``
    (its number in the document, which must be on that page), at most ``max_side`` pixels
    on its longest side when given.

    Raises:
        InvalidRequest: ``width`` out of bounds, or ``crop`` without a passage.
        DocumentNotFound, DocumentNotReady, NoPageImage, PageNotFound, PassageNotFound,
        FigureNotFound.
        PageRenderFailed: the page could not be drawn within the caps.
        BlobStoreUnavailable: the original could not be read.
    """
    check_width(width)
    if crop and passage is None:
        raise InvalidRequest("crop=passage needs highlight=<passage id>.", field="crop")
    images = runtime.page_images
    async with connection(runtime.pool) as conn:
        document = await documents.get_document(conn, principal, document_id)
        check_page(document, page)
        if passage is not None:
            _ordinal(document, passage)
        clip = await _figure_box(conn, document, page, figure) if figure is not None else None
        # A passage id names the same text for as long as the content and the chunk size do.
        key: CacheKey = (
            document.content_hash or str(document.id),
            page,
            width,
            max_side,
            crop,
            figure,
            f"{runtime.settings.search.chunk_size}/{passage}" if passage else "",
        )
        cached = images.cache.get(key)
        if cached is not None:
            return cached
        text = await passage_text(runtime, conn, principal, document, passage) if passage else None
        lines = await _ocr_lines(conn, principal, document, page) if text is not None else ()
    data = await _original(runtime, document)
    kind: RenderKind = "image" if document.kind == "image" else "pdf"
    drawn = await images.draw(
        data,
        RenderRequest(
            kind=kind,
            page=page,
            width=width,
            passage=text,
            crop=crop,
            max_side=max_side,
            clip=clip,
            ocr_lines=lines,
        ),
    )
    images.cache.put(key, drawn)
    return drawn


async def _ocr_lines(
    conn: Connection, principal: Principal, document: Document, page: int
) -> tuple[WordBox, ...]:
    """The lines recognised on ``page`` when it was read by OCR (else none: the page's own
    words are where a passage is looked for)."""
    if page not in document.ocr_pages:
        return ()
    rows = await fetch_all(
        conn,
        "fetch_document_ocr_lines",
        document_id=document.id,
        user_id=principal.user_id,
        page=page,
    )
    lines = from_wire([row["line"] for row in rows], list[OcrLine], "recognised lines")
    return tuple(WordBox(*line.box, line.text) for line in lines)


async def _figure_box(
    conn: Connection, document: Document, page: int, number: int
) -> tuple[float, float, float, float]:
    """The box of the document's figure ``number`` (1-based), which must be on ``page``."""
    found = (await figures.figures_of(conn, [document.id])).get(str(document.id), [])
    if not 1 <= number <= len(found) or found[number - 1].page != page:
        raise FigureNotFound(
            f"{document.name!r} has no figure {number} on page {page} "
            f"({len(found)} figure(s) in all).",
            figure=number,
        )
    return found[number - 1].box


async def _original(runtime: Runtime, document: Document) -> bytes:
    if document.object_key is None or not document.has_original:
        raise DocumentNotFound("The original of this document was not kept.")
    key = document.object_key
    try:
        return await anyio.to_thread.run_sync(runtime.blobs.read, key)
    except BlobNotFound:
        raise DocumentNotFound("The original of this document is missing from storage.") from None
