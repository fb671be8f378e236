"""Which pages: a PDF page's own text layer measured, and the decision whether to recognise it
instead (:func:`ocr_reason`; the rules are in :mod:`extract.ocr`)."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from extract.ocr.plausibility import is_garbage, is_misread

MIN_TEXT_CHARS = 10
"""Below this many letters/digits, a page that shows an image (or ink) has no text layer."""
GARBAGE_SHARE = 0.3
"""A text layer with at least this share of unmapped characters is garbage."""


IMAGE_COVER_SHARE = 0.75
"""A page whose images cover at least this share of it is "mostly image"…"""
TINY_TEXT_SHARE = 0.05
"""…and its text layer is a tiny fraction when its blocks cover less than this share of it."""
INK_SHARE = 0.002
"""A page with no text and no image is still printed (vector or unmapped glyphs) above this
share of dark pixels in a coarse rendering."""


_INK_DPI = 18
_UNMAPPED_CATEGORIES = frozenset({"Cc", "Co", "Cn", "Cs"})

OcrReason = Literal["no_text", "garbage_text", "not_words", "misread_text", "tiny_text", "forced"]
"""Why a page is recognised instead of read from its text layer."""
UNUSABLE: frozenset[OcrReason] = frozenset({"garbage_text", "not_words"})
"""Reasons whose text layer is not text at all: a page recognition does not read is left
without text (not searchable) rather than given that layer. A ``misread_text`` layer (an
English OCR layer with many misread words) keeps its words when recognition fails."""


@dataclass(frozen=True)
class TextLayer:
    """What a page's own text layer holds, measured for :func:`ocr_reason`."""

    text: str
    text_area: float
    """Share of the page covered by text blocks (0-1)."""
    image_area: float
    """Share of the page covered by images (0-1, overlaps counted once per image)."""
    ink: float = 0.0
    """Share of dark pixels in a coarse rendering (measured only for pages with no text
    and no image; 0 otherwise)."""

    @property
    def letters(self) -> int:
        return sum(1 for char in self.text if char.isalnum())

    @property
    def symbol_share(self) -> float:
        """Share of the non-space characters that are neither letters nor digits."""
        characters = [char for char in self.text if not char.isspace()]
        if not characters:
            return 0.0
        return sum(1 for char in characters if not char.isalnum()) / len(characters)

    @property
    def unmapped_share(self) -> float:
        characters = [char for char in self.text if not char.isspace()]
        if not characters:
            return 0.0
        unmapped = sum(1 for char in characters if _unmapped(char))
        return unmapped / len(characters)


def _unmapped(char: str) -> bool:
    return char == "\ufffd" or unicodedata.category(char) in _UNMAPPED_CATEGORIES


def ocr_reason(layer: TextLayer, *, force: bool = False) -> OcrReason | None:
    """Why the page must be recognised, or None when its text layer is good (see :mod:`extract.ocr`)."""
    if layer.letters < MIN_TEXT_CHARS:
        if layer.image_area > 0 or layer.ink >= INK_SHARE:
            return "no_text"
        if layer.symbol_share > 0.5:  # a few glyphs mapped to punctuation: "7+%-" for "Phone"
            return "garbage_text"
        return "forced" if force else None
    if layer.unmapped_share >= GARBAGE_SHARE:
        return "garbage_text"
    if is_garbage(layer.text):
        return "not_words"
    if layer.image_area >= IMAGE_COVER_SHARE and is_misread(layer.text):
        return "misread_text"
    if layer.image_area >= IMAGE_COVER_SHARE and layer.text_area < TINY_TEXT_SHARE:
        return "tiny_text"
    return "forced" if force else None


def describe_pdf_page(page: Any, blocks: Sequence[Sequence[Any]]) -> TextLayer:
    """Measure a PyMuPDF page's text layer from its ``get_text("blocks")`` output."""
    rect = page.rect
    area = max(float(rect.width * rect.height), 1.0)
    text = "\n".join(str(block[4]) for block in blocks if block[6] == 0)
    text_area = sum(
        _clipped_area(block[:4], rect)
        for block in blocks
        if block[6] == 0 and str(block[4]).strip()
    )
    image_area = sum(_clipped_area(info["bbox"], rect) for info in page.get_image_info())
    image_area += sum(_clipped_area(block[:4], rect) for block in blocks if block[6] == 1)
    layer = TextLayer(text, min(text_area / area, 1.0), min(image_area / area, 1.0))
    if layer.letters < MIN_TEXT_CHARS and layer.image_area == 0:
        layer = TextLayer(layer.text, layer.text_area, 0.0, ink=_ink_share(page))
    return layer


def _clipped_area(bbox: Sequence[float], rect: Any) -> float:
    x0, y0, x1, y1 = (float(value) for value in bbox[:4])
    width = min(x1, float(rect.x1)) - max(x0, float(rect.x0))
    height = min(y1, float(rect.y1)) - max(y0, float(rect.y0))
    return max(width, 0.0) * max(height, 0.0)


def _ink_share(page: Any) -> float:
    import pymupdf

    pixmap = page.get_pixmap(dpi=_INK_DPI, colorspace=pymupdf.csGRAY, alpha=False)
    samples = bytes(pixmap.samples)
    if not samples:
        return 0.0
    return sum(1 for value in samples if value < 128) / len(samples)
