"""In-process extraction: detect the kind, then hand the bytes to that kind's extractor."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from extract.detect import detect_kind
from extract.epub import extract_epub
from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionError,
)
from extract.html import extract_html
from extract.images import extract_image
from extract.notebook import extract_notebook
from extract.ocr import OcrEngine
from extract.office import extract_docx, extract_pptx, extract_xlsx
from extract.pdf import extract_pdf
from extract.text import extract_csv, extract_markdown, extract_text
from extract.types import Extraction, ExtractionLimits, Kind, Progress
from extract.webvtt import extract_webvtt

_BY_KIND: dict[Kind, Callable[[bytes, ExtractionLimits], Extraction]] = {
    "docx": extract_docx,
    "pptx": extract_pptx,
    "xlsx": extract_xlsx,
    "epub": extract_epub,
    "notebook": lambda data, _limits: extract_notebook(data),
    "webvtt": lambda data, _limits: extract_webvtt(data),
    "csv": lambda data, _limits: extract_csv(data),
    "html": lambda data, _limits: extract_html(data),
    "markdown": lambda data, _limits: extract_markdown(data),
    "text": lambda data, _limits: extract_text(data),
}


def check_size(data: bytes, limits: ExtractionLimits) -> None:
    """Refuse bytes over ``limits.max_bytes`` before any parser sees them.

    Raises:
        DocumentTooLargeError: naming the size and the limit.
    """
    if len(data) > limits.max_bytes:
        raise DocumentTooLargeError(
            f"The file is {len(data) / 2**20:.1f} MB, more than the "
            f"{limits.max_bytes / 2**20:.0f} MB allowed"
        )


def extract_document(
    data: bytes,
    filename: str,
    content_type: str | None,
    *,
    limits: ExtractionLimits | None = None,
    ocr: OcrEngine | None = None,
    progress: Progress | None = None,
) -> Extraction:
    """Turn a file's bytes into page-marked Markdown, in this process.

    ``ocr`` replaces the OCR engine ``limits.ocr`` selects (see :mod:`extract.ocr`);
    ``progress`` is told ``(pages_done, page_count)`` after each page of a PDF.
    Every failure is an :class:`~extract.errors.ExtractionError`; a parser's own
    exception is reported as a corrupt document rather than escaping.

    Raises:
        ExtractionError: one of its subclasses, naming what went wrong.
    """
    limits = limits or ExtractionLimits()
    check_size(data, limits)
    kind, warnings = detect_kind(data, filename, content_type)
    try:
        if kind == "pdf":
            extraction = extract_pdf(data, limits, ocr=ocr, progress=progress)
        elif kind == "image":
            extraction = extract_image(data, limits, ocr=ocr)
        else:
            extraction = _BY_KIND[kind](data, limits)
    except ExtractionError:
        raise
    except MemoryError as exc:
        raise DocumentTooLargeError(
            "The document needs more memory to read than is allowed"
        ) from exc
    except RecursionError as exc:
        raise CorruptDocumentError("The document is nested too deeply to read") from exc
    except Exception as exc:
        raise CorruptDocumentError(f"The {kind} file could not be read: {exc}") from exc
    if warnings:
        extraction = dataclasses.replace(extraction, warnings=(*warnings, *extraction.warnings))
    return extraction
