"""Value types of the extraction contract: limits in, :class:`Extraction` out."""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

Kind = Literal[
    "pdf",
    "docx",
    "pptx",
    "xlsx",
    "epub",
    "csv",
    "html",
    "markdown",
    "text",
    "notebook",
    "webvtt",
    "image",
]
"""Every document kind extraction accepts (``image``: PNG, JPEG, TIFF or WebP, read by OCR)."""

KINDS: tuple[Kind, ...] = (
    "pdf", "docx", "pptx", "xlsx", "epub", "csv", "html", "markdown", "text", "notebook", "webvtt",
    "image",
)  # fmt: skip
OcrEngineName = Literal["auto", "rapidocr", "tesseract", "off"]
"""Which OCR engine reads pages without usable text: ``auto`` takes the first available of
RapidOCR (in the wheel) and Tesseract (when installed); ``off`` never recognises text."""

OCR_ENGINE_NAMES: tuple[OcrEngineName, ...] = ("auto", "rapidocr", "tesseract", "off")


@dataclass(frozen=True)
class OcrOptions:
    """How text is recognised on pages that have none (see :mod:`extract.ocr`)."""

    engine: OcrEngineName = "auto"
    """The engine; ``off`` leaves scans unsearchable."""
    languages: tuple[str, ...] = ("en",)
    """Language hints, ISO 639-1 (``en``, ``de``, ``pt``…); Tesseract needs their data installed."""
    dpi: int = 200
    """Resolution PDF pages are rendered at before recognition."""
    max_pages: int = 100
    """Most pages of one document that are recognised; later ones are left out, with a warning."""
    page_seconds: float = 20.0
    """Recognition time budget per page needing it (the document's budget is this times its
    pages); pages after the budget is spent are left out, with a warning."""
    force: bool = False
    """Recognise every page, even one whose text layer looks good."""


@dataclass(frozen=True)
class ExtractionLimits:
    """Resource limits for one extraction. Every field has a safe default."""

    max_bytes: int = 50 * 1024 * 1024
    """Refuse uploads larger than this before parsing anything."""
    max_pages: int = 2000
    """Refuse documents with more pages (PDF pages, slides, sheets) than this."""
    timeout_seconds: float = 120.0
    """Wall-clock limit of a sandboxed extraction (of each part of a PDF read in parts);
    the child is killed after it."""
    timeout_ceiling_seconds: float = 900.0
    """Wall-clock limit of a whole PDF read in parts: its time scales with its pages
    (``timeout_seconds`` per part, parts run in parallel) up to this."""
    memory_mb: int = 2048
    """Address-space cap (``RLIMIT_AS``) of the sandbox child."""
    layout_budget_seconds: float | None = None
    """Time the PDF layout engine (pymupdf4llm) may spend on one document; the
    remaining pages use the fast plain-text path. ``None`` means half of
    ``timeout_seconds`` (most of it for a part of a PDF read in parts)."""
    layout_max_pages: int = 1000
    """PDF pages after this many get the plain-text path, whatever the time."""
    layout_every_page: bool = False
    """Send every PDF page through the layout model; by default a page without images,
    vector graphics beyond a few rules, columns of text or text side by side that is no
    rule-less table takes the fast path (no model: :mod:`extract.simple_page`)."""
    max_unpacked_bytes: int = 512 * 1024 * 1024
    """Cap on the total uncompressed size of an Office file's ZIP members (zip bombs)."""
    max_scanned_fraction: float = 0.5
    """A PDF whose share of pages without text (after OCR) is above this is refused as a scan."""
    ocr: OcrOptions = field(default_factory=OcrOptions)
    """Text recognition for pages without a usable text layer, and for images."""

    def layout_budget(self) -> float:
        """The layout engine's time budget in seconds."""
        if self.layout_budget_seconds is not None:
            return self.layout_budget_seconds
        return self.timeout_seconds / 2


Rect = tuple[float, float, float, float]
"""A box on a page, in points: (x0, y0, x1, y1), origin top left."""


@dataclass(frozen=True)
class Figure:
    """One figure of a PDF page (:mod:`extract.figures`): where it is, its caption included,
    and what it is called. Only the box is kept, never pixels."""

    page: int
    """1-based."""
    box: Rect
    caption: str = ""
    """The caption's text ("Figure 3: Trace trees…"), "" when it has none."""
    label: str = ""
    """"Figure 3" (from the caption), "" when it has none."""


@dataclass(frozen=True)
class OcrLine:
    """One line of text recognised on a page (OCR), where it sits as shares of the page's
    width and height (0-1, origin top left), so it maps onto the page at any size."""

    page: int
    """1-based."""
    box: Rect
    text: str


@dataclass(frozen=True)
class Extraction:
    """A document as page-marked Markdown.

    Each page starts with a marker line ``<!-- page N -->`` (N is 1-based) at
    ``page_offsets[N - 1]``; non-paged kinds are a single page.
    """

    markdown: str
    page_count: int
    page_offsets: tuple[int, ...]
    kind: Kind
    warnings: tuple[str, ...] = ()
    ocr_pages: tuple[int, ...] = ()
    """1-based pages whose text was recognised from images (OCR), not read from a text layer."""
    figures: tuple[Figure, ...] = ()
    """The figures of a PDF's pages, in page order (none for other kinds)."""
    ocr_lines: tuple[OcrLine, ...] = ()
    """Where the recognised lines of ``ocr_pages`` sit, so a passage can be found on them."""

    def __post_init__(self) -> None:
        if len(self.page_offsets) != self.page_count:
            raise ValueError(
                f"page_offsets has {len(self.page_offsets)} entries for {self.page_count} pages"
            )

    def page_of(self, offset: int) -> int:
        """The 1-based page holding the character at ``offset`` (clamped to the document)."""
        return max(1, bisect.bisect_right(self.page_offsets, offset))


Progress = Callable[[int, int], None]
"""Told ``(pages_done, page_count)`` as the pages of a document are read."""
