"""Bytes to page-marked Markdown, once, at upload (no database, no HTTP).

``extract_document`` works in-process; ``extract_in_sandbox`` does the same in
a fresh child process with a memory cap and a wall-clock timeout, and a
``SandboxPool`` in children started ahead of time.
"""

from __future__ import annotations

from extract.detect import (
    ALLOWED_CONTENT_TYPES,
    EXTENSION_KINDS,
    KIND_CONTENT_TYPES,
    detect_kind,
    kind_for_upload,
)
from extract.document import extract_document
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
from extract.sandbox import SandboxPool, extract_in_sandbox
from extract.types import KINDS, Extraction, ExtractionLimits, Kind, OcrOptions

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
