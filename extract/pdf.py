"""PDF to page-marked Markdown: pymupdf4llm for layout, plain PyMuPDF as the safety net.

Per page, in order:

1. PyMuPDF reads the plain text blocks. A page with fewer than
   :data:`MIN_TEXT_CHARS` letters or digits that shows an image has *no text
   layer* (a scan). When no page has text, or the share of scanned pages is
   above ``limits.max_scanned_fraction`` ("most pages are scans"), the whole
   document is refused with :class:`ScannedPdfError`; otherwise it succeeds
   with a warning that names the scanned pages. An ``ocr`` hook, when given,
   is asked for a scanned page's text first (nothing implements one yet).
2. pymupdf4llm renders the page as Markdown (headings, tables, reading order).
   It gets a time budget per document (``limits.layout_budget()``); once it is
   spent, the remaining pages use the plain blocks, so long documents finish
   inside the sandbox timeout. A page where pymupdf4llm fails (for example
   "Cycle in field parents") or keeps less than half of the plain text (it
   skips invisible OCR text layers) also uses the plain blocks. Every fallback
   is reported in ``warnings``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    ScannedPdfError,
)
from extract.markdown import assemble_pages
from extract.types import Extraction, ExtractionLimits, PageOcr

MIN_TEXT_CHARS = 10
"""Below this many letters/digits, a page that shows an image counts as a scan."""
LAYOUT_KEEP_RATIO = 0.5
"""pymupdf4llm output with fewer letters/digits than this share of the plain text is discarded."""
OCR_DPI = 200

_PICTURE_TEXT_MARKERS = re.compile(r"<!-- (Start|End) of picture text -->\n?")


@dataclass
class _PlainPage:
    """What plain PyMuPDF reads from one page."""

    paragraphs: list[str]
    has_images: bool
    error: str | None = None

    @property
    def markdown(self) -> str:
        return "\n\n".join(self.paragraphs)

    @property
    def letters(self) -> int:
        return sum(_count_alnum(paragraph) for paragraph in self.paragraphs)

    @property
    def is_scan(self) -> bool:
        return self.error is None and self.has_images and self.letters < MIN_TEXT_CHARS


def _count_alnum(text: str) -> int:
    return sum(1 for char in text if char.isalnum())


def _read_plain(document: Any, index: int) -> _PlainPage:
    try:
        page = document[index]
        blocks = page.get_text("blocks")
        has_images = bool(page.get_images()) or any(block[6] == 1 for block in blocks)
    except Exception as exc:
        return _PlainPage([], has_images=False, error=_page_error(exc))
    paragraphs = [" ".join(block[4].split()) for block in blocks if block[6] == 0]
    return _PlainPage([p for p in paragraphs if p], has_images=has_images)


def _page_error(exc: Exception) -> str:
    """Why a page could not be read, in words (MuPDF says "exception stack overflow")."""
    reason = str(exc) or type(exc).__name__
    if "stack overflow" in reason or "too many nested" in reason:
        return f"its content is nested more deeply than the PDF reader allows ({reason})"
    return reason


def _page_ranges(pages: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"`` (1-based numbers in, text out)."""
    ranges: list[str] = []
    start = previous = pages[0]
    for number in [*pages[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(ranges)


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


def _ocr_scans(document: Any, plain: list[_PlainPage], ocr: PageOcr) -> dict[int, str]:
    recognised: dict[int, str] = {}
    for index, page in enumerate(plain):
        if page.is_scan:
            png = document[index].get_pixmap(dpi=OCR_DPI).tobytes("png")
            text = ocr(png, index + 1).strip()
            if text:
                recognised[index] = text
    return recognised


def _check_scans(
    scanned: list[int], page_count: int, readable: int, limits: ExtractionLimits
) -> list[str]:
    if not scanned:
        return []
    if len(scanned) >= readable or len(scanned) / page_count > limits.max_scanned_fraction:
        raise ScannedPdfError(len(scanned), page_count)
    numbers = [index + 1 for index in scanned]
    return [
        f"{len(scanned)} of {page_count} pages have no text layer (scanned images) and are not "
        f"searchable: page {_page_ranges(numbers)}"
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
    ocr: PageOcr | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Extraction:
    """A PDF as Markdown with one ``<!-- page N -->`` section per page.

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
        recognised = _ocr_scans(document, plain, ocr) if ocr is not None else {}
        scanned = [i for i, page in enumerate(plain) if page.is_scan and i not in recognised]
        warnings = _check_scans(scanned, page_count, page_count - len(unreadable), limits)
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
            elif page.error or page.is_scan:
                bodies.append("")
            else:
                bodies.append(layout.render(index, page))
        warnings.extend(layout.warnings(budget))
    return assemble_pages(bodies, "pdf", warnings)
