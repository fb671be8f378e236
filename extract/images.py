"""Images as documents: PNG, JPEG, TIFF (each frame a page) and WebP, read by OCR.

Pillow decodes the image (only after its size is checked against
:data:`MAX_IMAGE_PIXELS`, so a small file that claims a huge canvas is refused
before any pixel is decoded); each frame becomes a grayscale page, scaled down to
at most :data:`extract.ocr.MAX_RENDER_SIDE` pixels, and goes through the same
recognition as a scanned PDF page (:func:`extract.ocr.recognise_pages`). An image
in which nothing legible is recognised is an :class:`EmptyDocumentError`.
"""

from __future__ import annotations

import dataclasses
import io
import time
import warnings
from collections.abc import Callable
from typing import Any

from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EmptyDocumentError,
    UnsupportedFormatError,
)
from extract.markdown import assemble_pages, page_ranges
from extract.ocr import MAX_RENDER_SIDE, OcrEngine, PageImage, ocr_deadline, recognise_pages
from extract.types import Extraction, ExtractionLimits

MAX_IMAGE_PIXELS = 80_000_000
"""Largest canvas (width x height, per frame) an image may declare: 80 megapixels (below
Pillow's own decompression-bomb threshold, so this limit is the one that speaks)."""

_FORMATS = ("PNG", "JPEG", "TIFF", "WEBP", "MPO")  # MPO: a JPEG with extra frames (cameras)


def open_image(data: bytes) -> Any:
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(io.BytesIO(data), formats=_FORMATS)
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise DocumentTooLargeError(
            f"The image is larger than the {MAX_IMAGE_PIXELS // 1_000_000} megapixels allowed"
        ) from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError) as exc:
        raise CorruptDocumentError(f"The image is damaged and could not be read: {exc}") from exc
    return image


def _frame(image: Any, index: int) -> PageImage:
    """Frame ``index`` as an 8-bit grayscale page no larger than ``MAX_RENDER_SIDE``."""
    image.seek(index)
    width, height = image.size
    if width * height > MAX_IMAGE_PIXELS:
        raise DocumentTooLargeError(
            f"Page {index + 1} of the image is {width}x{height} pixels, more than the "
            f"{MAX_IMAGE_PIXELS // 1_000_000} megapixels allowed"
        )
    if image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info:
        rgba = image.convert("RGBA")
        from PIL import Image

        flattened = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        flattened.alpha_composite(rgba)
        gray = flattened.convert("L")
    else:
        gray = image.convert("L")
    longest = max(gray.size)
    if longest > MAX_RENDER_SIDE:
        scale = MAX_RENDER_SIDE / longest
        gray = gray.resize((max(1, round(gray.width * scale)), max(1, round(gray.height * scale))))
    return PageImage(gray.width, gray.height, gray.tobytes())


def extract_image(
    data: bytes,
    limits: ExtractionLimits,
    *,
    ocr: OcrEngine | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> Extraction:
    """An image's recognised text, one ``<!-- page N -->`` section per frame.

    ``ocr`` overrides the engine ``limits.ocr`` selects (tests and benchmarks).

    Raises:
        CorruptDocumentError: the image cannot be decoded.
        DocumentTooLargeError: a frame over :data:`MAX_IMAGE_PIXELS`, or more frames
            than ``limits.max_pages``.
        UnsupportedFormatError: text recognition is turned off or not installed.
        EmptyDocumentError: nothing legible was recognised.
    """
    started = clock()
    image = open_image(data)
    with image:
        # Pillow gives ``n_frames`` only to formats that can hold several (not to JPEG).
        frames = int(getattr(image, "n_frames", 1) or 1)
        if frames > limits.max_pages:
            raise DocumentTooLargeError(
                f"The image has {frames} pages, more than the {limits.max_pages} allowed"
            )
        try:
            result = recognise_pages(
                lambda index: _frame(image, index),
                range(frames),
                limits.ocr,
                deadline=ocr_deadline(started, limits),
                clock=clock,
                engine=ocr,
            )
        except (OSError, ValueError, SyntaxError) as exc:
            raise CorruptDocumentError(
                f"The image is damaged and could not be read: {exc}"
            ) from exc
    if result.unavailable is not None:
        raise UnsupportedFormatError(f"Images are read by OCR, but {result.unavailable}")
    if not result.texts:
        if result.failed:
            raise CorruptDocumentError(
                f"Text recognition failed on this image ({result.first_failure})"
            )
        raise EmptyDocumentError(
            "No legible text was recognised in this image"
            + (f" (page {page_ranges([i + 1 for i in result.illegible])})" if frames > 1 else "")
        )
    bodies = [result.texts.get(index, "") for index in range(frames)]
    extraction = assemble_pages(bodies, "image", result.warnings())
    return dataclasses.replace(
        extraction, ocr_pages=result.recognised_pages, ocr_lines=result.ocr_lines()
    )
