"""PDF to page-marked Markdown: pymupdf4llm for layout, plain PyMuPDF as the safety net.

Per page, in order:

1. PyMuPDF reads the plain text blocks. A page with no text layer (a scan), a
   garbage one, or one that is a tiny fraction of a mostly-image page is
   rendered and recognised by OCR (:mod:`extract.ocr`, within its budget; the
   warnings name the recognised pages). When no page has text after that, or
   the share of pages still without text is above
   ``limits.max_scanned_fraction`` ("most pages are scans"), the whole document
   is refused with :class:`ScannedPdfError`, saying why recognition did not
   help; otherwise it succeeds with a warning that names those pages.
2. pymupdf4llm renders the page as Markdown (headings, tables, reading order).
   It gets a time budget per document (``limits.layout_budget()``); once it is
   spent, the remaining pages use the plain blocks, so long documents finish
   inside the sandbox timeout. A page where pymupdf4llm fails (for example
   "Cycle in field parents") or keeps less than half of the plain text (it
   skips invisible OCR text layers) also uses the plain blocks. Every fallback
   is reported in ``warnings``.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    ScannedPdfError,
)
from extract.markdown import assemble_pages
from extract.markdown import page_ranges as _page_ranges
from extract.ocr import (
    MIN_TEXT_CHARS,
    OcrEngine,
    OcrReason,
    OcrResult,
    TextLayer,
    describe_pdf_page,
    ocr_deadline,
    ocr_reason,
    recognise_pages,
    render_pdf_page,
)
from extract.types import Extraction, ExtractionLimits

__all__ = ["LAYOUT_KEEP_RATIO", "MIN_TEXT_CHARS", "extract_pdf"]

LAYOUT_KEEP_RATIO = 0.5
"""pymupdf4llm output with fewer letters/digits than this share of the plain text is discarded."""

_PICTURE_TEXT_MARKERS = re.compile(r"<!-- (Start|End) of picture text -->\n?")


@dataclass
class _PlainPage:
    """What plain PyMuPDF reads from one page."""

    paragraphs: list[str]
    has_images: bool
    error: str | None = None
    layer: TextLayer | None = None

    @property
    def markdown(self) -> str:
        return "\n\n".join(self.paragraphs)

    @property
    def letters(self) -> int:
        return sum(_count_alnum(paragraph) for paragraph in self.paragraphs)

    def ocr_reason(self, limits: ExtractionLimits) -> OcrReason | None:
        if self.error is not None or self.layer is None:
            return None
        return ocr_reason(self.layer, force=limits.ocr.force)


def _count_alnum(text: str) -> int:
    return sum(1 for char in text if char.isalnum())


def _read_plain(document: Any, index: int) -> _PlainPage:
    try:
        page = document[index]
        blocks = page.get_text("blocks")
        has_images = bool(page.get_images()) or any(block[6] == 1 for block in blocks)
        layer = describe_pdf_page(page, blocks)
    except Exception as exc:
        return _PlainPage([], has_images=False, error=_page_error(exc))
    paragraphs = [" ".join(block[4].split()) for block in blocks if block[6] == 0]
    return _PlainPage([p for p in paragraphs if p], has_images=has_images, layer=layer)


def _page_error(exc: Exception) -> str:
    """Why a page could not be read, in words (MuPDF says "exception stack overflow")."""
    reason = str(exc) or type(exc).__name__
    if "stack overflow" in reason or "too many nested" in reason:
        return f"its content is nested more deeply than the PDF reader allows ({reason})"
    return reason


def _open(data: bytes) -> Any:
    import pymupdf

    try:
        document = cast(Any, pymupdf).open(stream=data, filetype="pdf")
    except Exception as exc:
        raise CorruptDocumentError(f"This PDF is damaged and could not be opened: {exc}") from exc
    if document.needs_pass:
        document.close()
        raise EncryptedDocumentError(
            "This PDF needs a password to open; remove the password and upload it again"
        )
    return document


def _recognise(
    document: Any,
    plain: list[_PlainPage],
    limits: ExtractionLimits,
    started: float,
    clock: Callable[[], float],
    engine: OcrEngine | None,
) -> tuple[dict[int, OcrReason], OcrResult]:
    """The seam to :mod:`extract.ocr`: which pages need recognition, and what it read."""
    reasons = {
        index: reason
        for index, page in enumerate(plain)
        if (reason := page.ocr_reason(limits)) is not None
    }
    result = recognise_pages(
        lambda index: render_pdf_page(document[index], limits.ocr.dpi),
        sorted(reasons),
        limits.ocr,
        deadline=ocr_deadline(started, limits),
        clock=clock,
        engine=engine,
    )
    return reasons, result


def _check_scans(
    scanned: list[int], page_count: int, readable: int, limits: ExtractionLimits, ocr: OcrResult
) -> list[str]:
    if not scanned:
        return []
    why = ocr.unavailable or (
        f"text recognition (OCR) failed on them ({ocr.first_failure})"
        if ocr.failed and not ocr.illegible
        else "text recognition (OCR) found nothing legible on them"
    )
    if len(scanned) >= readable or len(scanned) / page_count > limits.max_scanned_fraction:
        raise ScannedPdfError(
            len(scanned),
            page_count,
            f"This PDF is a scan: {len(scanned)} of {page_count} pages have no text layer, "
            f"and {why}",
        )
    numbers = [index + 1 for index in scanned]
    return [
        f"{len(scanned)} of {page_count} pages have no text layer (scanned images) and are not "
        f"searchable ({why}): page {_page_ranges(numbers)}"
    ]


def _layout_markdown(document: Any, index: int) -> str:
    import pymupdf4llm

    chunks = pymupdf4llm.to_markdown(
        document, pages=[index], page_chunks=True, use_ocr=False, show_progress=False
    )
    return _PICTURE_TEXT_MARKERS.sub("", "".join(chunk["text"] for chunk in chunks))


class _LayoutPass:
    """Runs pymupdf4llm page by page until its budget is spent, noting every fallback."""

    def __init__(self, document: Any, deadline: float, clock: Callable[[], float]) -> None:
        self._document = document
        self._clock = clock
        self._deadline = deadline
        self.over_budget: list[int] = []
        self.failed: list[int] = []
        self.first_failure = ""
        self.dropped_text: list[int] = []

    def render(self, index: int, plain: _PlainPage) -> str:
        if self.over_budget or self._clock() >= self._deadline:
            self.over_budget.append(index + 1)
            return plain.markdown
        try:
            markdown = _layout_markdown(self._document, index)
        except Exception as exc:
            self.failed.append(index + 1)
            self.first_failure = self.first_failure or (str(exc) or type(exc).__name__)
            return plain.markdown
        if _count_alnum(markdown) < LAYOUT_KEEP_RATIO * plain.letters:
            self.dropped_text.append(index + 1)
            return plain.markdown
        return markdown

    def warnings(self, budget: float) -> list[str]:
        notes: list[str] = []
        if self.over_budget:
            notes.append(
                f"Layout analysis used up its {budget:g} s budget; page "
                f"{_page_ranges(self.over_budget)} extracted as plain text (no tables or headings)"
            )
        if self.failed:
            notes.append(
                f"Layout analysis failed ({self.first_failure}); page "
                f"{_page_ranges(self.failed)} extracted as plain text"
            )
        if self.dropped_text:
            notes.append(
                f"Layout analysis missed most of the text layer on page "
                f"{_page_ranges(self.dropped_text)}; extracted as plain text"
            )
        return notes


def extract_pdf(
    data: bytes,
    limits: ExtractionLimits,
    *,
    ocr: OcrEngine | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Extraction:
    """A PDF as Markdown with one ``<!-- page N -->`` section per page.

    ``ocr`` overrides the engine ``limits.ocr`` selects (tests and benchmarks).

    Raises:
        CorruptDocumentError: unreadable file, no pages, or no readable page.
        EncryptedDocumentError: a user (open) password is required.
        DocumentTooLargeError: more than ``limits.max_pages`` pages.
        ScannedPdfError: no text layer on all or most pages (see the module docstring).
        EmptyDocumentError: readable pages, but no text and no images.
    """
    started = clock()  # the layout budget counts from here, so it includes the plain pass
    document = _open(data)
    with document:
        page_count = document.page_count
        if page_count == 0:
            raise CorruptDocumentError(
                "This PDF has no readable pages; re-export or re-download it"
            )
        if page_count > limits.max_pages:
            raise DocumentTooLargeError(
                f"The PDF has {page_count} pages, more than the {limits.max_pages} allowed"
            )
        plain = [_read_plain(document, index) for index in range(page_count)]
        unreadable = [index + 1 for index, page in enumerate(plain) if page.error]
        if len(unreadable) == page_count:
            raise CorruptDocumentError(f"No page of this PDF could be read: {plain[0].error}")
        if unreadable and not any(page.paragraphs or page.has_images for page in plain):
            # Not empty: what could hold text did not open.
            raise CorruptDocumentError(
                f"Page {_page_ranges(unreadable)} of this PDF could not be read "
                f"({plain[unreadable[0] - 1].error}) and the other pages are blank"
            )
        reasons, ocr_result = _recognise(document, plain, limits, started, clock, ocr)
        recognised = ocr_result.texts
        left_out = set(ocr_result.left_out)
        # Pages left out for lack of budget are warned about, not counted as scans,
        # unless nothing at all was recognised.
        skip = left_out if recognised else set()
        scanned = [
            i
            for i, reason in reasons.items()
            if reason == "no_text" and i not in recognised and i not in skip
        ]
        warnings = _check_scans(
            scanned, page_count, page_count - len(unreadable), limits, ocr_result
        )
        warnings.extend(ocr_result.warnings())
        if unreadable:
            warnings.append(
                f"Page {_page_ranges(unreadable)} could not be read "
                f"({plain[unreadable[0] - 1].error})"
            )

        budget = limits.layout_budget()
        layout = _LayoutPass(document, started + budget, clock)
        bodies: list[str] = []
        for index, page in enumerate(plain):
            if index in recognised:
                bodies.append(recognised[index])
            elif page.error or reasons.get(index) == "no_text":
                bodies.append("")
            else:
                bodies.append(layout.render(index, page))
        warnings.extend(layout.warnings(budget))
    return dataclasses.replace(
        assemble_pages(bodies, "pdf", warnings), ocr_pages=ocr_result.recognised_pages
    )
