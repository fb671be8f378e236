"""Bytes to page-marked Markdown, once, at upload (no database, no HTTP).

``extract_document`` works in-process; ``extract_in_sandbox`` does the same in
a fresh child process with a memory cap and a wall-clock timeout, and a
``SandboxPool`` in children started ahead of time.

Importing the package loads only its errors and types: the extractors (and what they import:
PyMuPDF, Beautiful Soup, defusedxml, the OCR engines) load when one of their names is first
used, so ``retrieval``, which imports :mod:`extract.page_markers`, never loads them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EmptyDocumentError,
    EncryptedDocumentError,
    ExtractionError,
    ExtractionTimeout,
    ScannedPdfError,
    UnsupportedFormatError,
)
from extract.types import KINDS, Extraction, ExtractionLimits, Kind, OcrOptions

if TYPE_CHECKING:
    from extract.detect import (
        ALLOWED_CONTENT_TYPES,
        EXTENSION_KINDS,
        KIND_CONTENT_TYPES,
        detect_kind,
        kind_for_upload,
    )
    from extract.document import extract_document
    from extract.sandbox import SandboxPool, extract_in_sandbox

_LOADED_ON_USE = {
    "ALLOWED_CONTENT_TYPES": "extract.detect",
    "EXTENSION_KINDS": "extract.detect",
    "KIND_CONTENT_TYPES": "extract.detect",
    "detect_kind": "extract.detect",
    "kind_for_upload": "extract.detect",
    "extract_document": "extract.document",
    "SandboxPool": "extract.sandbox",
    "extract_in_sandbox": "extract.sandbox",
}
"""The names above that live in modules which import the extractors, and their modules."""


def __getattr__(name: str) -> Any:
    module = _LOADED_ON_USE.get(name)
    if module is None:
        raise AttributeError(f"module 'extract' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "ALLOWED_CONTENT_TYPES",
    "EXTENSION_KINDS",
    "KINDS",
    "KIND_CONTENT_TYPES",
    "CorruptDocumentError",
    "DocumentTooLargeError",
    "EmptyDocumentError",
    "EncryptedDocumentError",
    "Extraction",
    "ExtractionError",
    "ExtractionLimits",
    "ExtractionTimeout",
    "Kind",
    "OcrOptions",
    "SandboxPool",
    "ScannedPdfError",
    "UnsupportedFormatError",
    "detect_kind",
    "extract_document",
    "extract_in_sandbox",
    "kind_for_upload",
]
