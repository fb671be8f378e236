"""One page of an original as a picture, optionally with a passage marked or cropped to it.

A PDF page is drawn by PyMuPDF; an image document (PNG, JPEG, TIFF, WebP) is its own page
(a TIFF's frame ``n`` its page ``n``), read by Pillow. Runs in the sandbox child (operation
``render`` of :mod:`extract.sandbox_child`), under the same memory and time caps as
extraction: a hostile original meets the same walls. The passage is found on the page by
:mod:`extract.locate` from the page's own words (or the recognised words given with the
request, for a page read by OCR).

Sizes are bounded here, once: an image is at most :data:`MAX_WIDTH` pixels wide and
:data:`MAX_PIXELS` in area, whatever is asked.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from extract.errors import CorruptDocumentError, DocumentTooLargeError, UnsupportedFormatError
from extract.locate import Box, Located, WordBox, locate

__all__ = [
    "DEFAULT_DPI",
    "HIGHLIGHT_OPACITY",
    "HIGHLIGHT_RGB",
    "MARGIN_POINTS",
    "MAX_PIXELS",
    "MAX_WIDTH",
    "MIN_WIDTH",
    "PAGE_IMAGE_KINDS",
    "RenderRequest",
    "RenderedPage",
    "ocr_words",
    "page_words",
    "render_page",
]

MAX_WIDTH = 2400
"""Widest image rendered, in pixels (a 150 dpi Letter page is 1275)."""
MIN_WIDTH = 64
"""Narrowest image a caller may ask for."""
MAX_PIXELS = 2400 * 3400
"""Largest image rendered (width x height): a page of an odd shape is drawn smaller."""
DEFAULT_DPI = 150
"""Resolution of a page rendered without a width."""
MARGIN_POINTS = 18.0
"""Space kept around a passage's region when the image is cropped to it (a quarter inch)."""
HIGHLIGHT_RGB = (1.0, 0.84, 0.0)
"""The marker's colour (a yellow highlighter) …"""
HIGHLIGHT_OPACITY = 0.35
"""… and how much of the page shows through it."""

RenderKind = Literal["pdf", "image"]
PAGE_IMAGE_KINDS: frozenset[str] = frozenset({"pdf", "image"})
"""Document kinds that have page images; every other kind has none."""


@dataclass(frozen=True)
class RenderRequest:
    """What to draw: which page, how wide, which passage to mark, cropped or whole."""

    kind: RenderKind
    page: int
    """1-based."""
    width: int | None = None
    """Pixels; None draws the page at :data:`DEFAULT_DPI`. Clamped to the bounds."""
    passage: str | None = None
    """Markdown of the passage to mark (a search result's text)."""
    crop: bool = False
    """Only the passage's region, with :data:`MARGIN_POINTS` around it (the whole page
    when the passage is not found)."""
    ocr_lines: tuple[WordBox, ...] = ()
    """Lines recognised on the page (OCR), their boxes as shares of the page's width and
    height: where a passage is looked for instead of the page's own words (a page read by
    OCR has no text layer, or a bad one)."""
    max_side: int | None = None
    """Longest side in pixels, whatever the width (a picture for a model, billed by area)."""
    clip: tuple[float, float, float, float] | None = None
    """A region of the page to draw alone, with :data:`MARGIN_POINTS` around it (a figure's
    box, in points); it overrides ``crop``."""


@dataclass(frozen=True)
class RenderedPage:
    """A drawn page: PNG bytes and what was found of the passage."""

    png: bytes
    width: int
    height: int
    page_count: int
    covered: float | None = None
    """Share of the passage's words found on the page; None when no passage was asked for."""
    cropped: bool = False
    """True when the image is the passage's region, not the whole page."""
    region: tuple[float, float, float, float] | None = None
    """The passage's region on the page, in points (None when not found or not asked)."""


def page_words(page: Any) -> list[WordBox]:
    """The words of a PyMuPDF page, in its reading order, with their boxes as the page is
    shown (MuPDF gives them on the unrotated page; a rotated page's are turned with it)."""
    words = page.get_text("words", sort=False)
    if not page.rotation:
        return [
            WordBox(float(x0), float(y0), float(x1), float(y1), str(text))
            for x0, y0, x1, y1, text, *_ in words
        ]
    import pymupdf

    library: Any = pymupdf
    turned = []
    for x0, y0, x1, y1, text, *_ in words:
        rect = library.Rect(x0, y0, x1, y1) * page.rotation_matrix
        turned.append(WordBox(rect.x0, rect.y0, rect.x1, rect.y1, str(text)))
    return turned


def ocr_words(lines: Sequence[WordBox], page: Box) -> list[WordBox]:
    """Recognised lines (boxes as shares of the page) as words on ``page``: each word gets the
    share of its line's width its characters take."""
    width, height = page.x1 - page.x0, page.y1 - page.y0
    words: list[WordBox] = []
    for line in lines:
        x0, x1 = page.x0 + line.x0 * width, page.x0 + line.x1 * width
        y0, y1 = page.y0 + line.y0 * height, page.y0 + line.y1 * height
        text = line.text
        step = (x1 - x0) / max(len(text), 1)
        for match in re.finditer(r"\S+", text):
            words.append(
                WordBox(x0 + match.start() * step, y0, x0 + match.end() * step, y1, match.group())
            )
    return words


def _zoom(width: float, height: float, request: RenderRequest) -> float:
    """Pixels per point (or per pixel, for images) that fit the asked width and the bounds."""
    if request.width is None:
        zoom = DEFAULT_DPI / 72 if request.kind == "pdf" else 1.0
    else:
        zoom = min(max(request.width, MIN_WIDTH), MAX_WIDTH) / max(width, 1e-6)
    zoom = min(zoom, MAX_WIDTH / max(width, 1e-6))
    if request.max_side is not None:
        zoom = min(zoom, max(request.max_side, MIN_WIDTH) / max(width, height, 1e-6))
    area = width * height * zoom * zoom
    if area > MAX_PIXELS:
        zoom *= (MAX_PIXELS / area) ** 0.5
    return max(zoom, 1e-3)


def _region(located: Located, page: Box) -> Box | None:
    bounds = located.bounds()
    if bounds is None:
        return None
    return _margin(bounds, page)


def _margin(bounds: Box, page: Box) -> Box:
    """``bounds`` with :data:`MARGIN_POINTS` around it, within the page."""
    return Box(
        max(page.x0, bounds.x0 - MARGIN_POINTS),
        max(page.y0, bounds.y0 - MARGIN_POINTS),
        min(page.x1, bounds.x1 + MARGIN_POINTS),
        min(page.y1, bounds.y1 + MARGIN_POINTS),
    )


def render_page(data: bytes, request: RenderRequest) -> RenderedPage:
    """Draw ``request.page`` of the original ``data``.

    Raises:
        CorruptDocumentError: the original cannot be opened, or the page cannot be drawn.
        EncryptedDocumentError: the PDF needs a password.
        UnsupportedFormatError: the page does not exist.
        DocumentTooLargeError: the image is larger than allowed (or memory ran out).
    """
    if request.kind == "image":
        return _render_image(data, request)
    return _render_pdf(data, request)


def _render_pdf(data: bytes, request: RenderRequest) -> RenderedPage:
    import pymupdf

    from extract.pdf import open_pdf

    document = open_pdf(data)
    try:
        page_count = int(document.page_count)
        page = _page(document, request.page, page_count)
        try:
            return _draw_pdf_page(pymupdf, page, page_count, request)
        except (MemoryError, DocumentTooLargeError):
            raise
        except Exception as exc:
            raise CorruptDocumentError(
                f"Page {request.page} of this PDF could not be drawn: {exc}"
            ) from exc
    finally:
        document.close()


def _page(document: Any, number: int, page_count: int) -> Any:
    if not 1 <= number <= page_count:
        raise UnsupportedFormatError(f"The document has {page_count} page(s); no page {number}")
    try:
        return document[number - 1]
    except Exception as exc:
        raise CorruptDocumentError(f"Page {number} of this PDF could not be read: {exc}") from exc


def _draw_pdf_page(
    pymupdf: Any, page: Any, page_count: int, request: RenderRequest
) -> RenderedPage:
    bounds = page.rect
    page_box = Box(bounds.x0, bounds.y0, bounds.x1, bounds.y1)
    located: Located | None = None
    region: Box | None = None
    if request.passage is not None:
        lines = request.ocr_lines
        words = ocr_words(lines, page_box) if lines else page_words(page)
        located = locate(request.passage, words)
        region = _region(located, page_box)
        _mark(pymupdf, page, located.lines)
    if request.clip is not None:
        region = _margin(Box(*request.clip), page_box)
    cropped = region is not None and (request.crop or request.clip is not None)
    clip = pymupdf.Rect(*region) if cropped and region is not None else bounds
    zoom = _zoom(float(clip.width), float(clip.height), request)
    if clip is not bounds:
        clip = _on_pixels(pymupdf, clip, zoom)
    pixmap = page.get_pixmap(matrix=pymupdf.Matrix(zoom, zoom), clip=clip, alpha=False, annots=True)
    return RenderedPage(
        png=pixmap.tobytes("png"),
        width=int(pixmap.width),
        height=int(pixmap.height),
        page_count=page_count,
        covered=None if located is None else located.covered,
        cropped=cropped,
        region=None if region is None else (region.x0, region.y0, region.x1, region.y1),
    )


def _on_pixels(pymupdf: Any, clip: Any, zoom: float) -> Any:
    """``clip`` moved onto whole pixels at ``zoom``, its size rounded down, so the picture is
    never a pixel wider or taller than the size asked for."""
    x0, y0 = math.floor(clip.x0 * zoom), math.floor(clip.y0 * zoom)
    width = max(1, math.floor(clip.width * zoom + 1e-6))
    height = max(1, math.floor(clip.height * zoom + 1e-6))
    return pymupdf.Rect(x0 / zoom, y0 / zoom, (x0 + width) / zoom, (y0 + height) / zoom)


def _mark(pymupdf: Any, page: Any, lines: Sequence[Box]) -> None:
    """Draw the highlighter over each line (in the page's unrotated space)."""
    if not lines:
        return
    shape = page.new_shape()
    for line in lines:
        rect = pymupdf.Rect(*line)
        if page.rotation:
            rect = rect * page.derotation_matrix
        shape.draw_rect(rect)
    shape.finish(color=None, fill=HIGHLIGHT_RGB, fill_opacity=HIGHLIGHT_OPACITY)
    shape.commit(overlay=True)


def _render_image(data: bytes, request: RenderRequest) -> RenderedPage:
    from PIL import Image, ImageDraw

    from extract.images import MAX_IMAGE_PIXELS, open_image

    image = open_image(data)
    with image:
        page_count = int(getattr(image, "n_frames", 1) or 1)
        if not 1 <= request.page <= page_count:
            raise UnsupportedFormatError(
                f"The image has {page_count} page(s); no page {request.page}"
            )
        try:
            image.seek(request.page - 1)
            if image.width * image.height > MAX_IMAGE_PIXELS:
                raise DocumentTooLargeError(
                    f"The image is larger than the {MAX_IMAGE_PIXELS // 1_000_000} megapixels "
                    "allowed"
                )
            frame = image.convert("RGB")
        except (OSError, ValueError, SyntaxError) as exc:
            raise CorruptDocumentError(f"The image could not be read: {exc}") from exc
    located: Located | None = None
    region: Box | None = None
    if request.passage is not None:
        frame_box = Box(0, 0, frame.width, frame.height)
        located = locate(request.passage, ocr_words(request.ocr_lines, frame_box))
        region = _region(located, frame_box)
        if located.lines:
            overlay = Image.new("RGB", frame.size, tuple(round(255 * c) for c in HIGHLIGHT_RGB))
            mask = Image.new("L", frame.size, 0)
            draw = ImageDraw.Draw(mask)
            for line in located.lines:
                draw.rectangle(tuple(line), fill=round(255 * HIGHLIGHT_OPACITY))
            frame = Image.composite(overlay, frame, mask)
    if request.crop and region is not None:
        frame = frame.crop(tuple(round(value) for value in region))
    zoom = _zoom(frame.width, frame.height, request)
    if abs(zoom - 1.0) > 1e-3:
        size = (max(1, round(frame.width * zoom)), max(1, round(frame.height * zoom)))
        frame = frame.resize(size)
    out = io.BytesIO()
    frame.save(out, format="PNG")
    return RenderedPage(
        png=out.getvalue(),
        width=frame.width,
        height=frame.height,
        page_count=page_count,
        covered=None if located is None else located.covered,
        cropped=request.crop and region is not None,
        region=None if region is None else (region.x0, region.y0, region.x1, region.y1),
    )
