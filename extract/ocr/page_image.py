"""A page as the engines see it: a grayscale raster, and how a PDF page is drawn as one."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

MAX_RENDER_SIDE = 4000
"""Longest side, in pixels, of a page image handed to an engine (larger pages render coarser)."""


BLANK_SHARE = 0.0005
"""A page image with fewer pixels than this share far from its background colour is blank:
it is not handed to the engine."""


@dataclass(frozen=True)
class PageImage:
    """A page as an 8-bit grayscale raster, row by row."""

    width: int
    height: int
    samples: bytes

    def __post_init__(self) -> None:
        if len(self.samples) != self.width * self.height:
            raise ValueError(f"{len(self.samples)} samples for a {self.width}x{self.height} image")

    def is_blank(self) -> bool:
        """True when hardly any pixel stands out from the background (nothing to read)."""
        import numpy as np

        pixels = np.frombuffer(self.samples, dtype=np.uint8)
        if pixels.size == 0:
            return True
        background = int(np.bincount(pixels, minlength=256).argmax())
        standing_out = np.count_nonzero(np.abs(pixels.astype(np.int16) - background) > 64)
        return bool(standing_out < BLANK_SHARE * pixels.size)

    def pgm(self) -> bytes:
        """The image as a binary PGM file (what Tesseract reads on stdin)."""
        return f"P5 {self.width} {self.height} 255\n".encode() + self.samples


def render_pdf_page(page: Any, dpi: int) -> PageImage:
    """Rasterise a PyMuPDF page to grayscale at ``dpi``, at most :data:`MAX_RENDER_SIDE` pixels."""
    import pymupdf

    longest = max(float(page.rect.width), float(page.rect.height), 1.0)
    dpi = max(min(dpi, int(MAX_RENDER_SIDE * 72 / longest)), 1)
    pixmap = page.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
    samples = bytes(pixmap.samples)
    if pixmap.stride != pixmap.width:  # rows may be padded
        samples = b"".join(
            samples[row * pixmap.stride : row * pixmap.stride + pixmap.width]
            for row in range(pixmap.height)
        )
    return PageImage(pixmap.width, pixmap.height, samples)
