"""Why an extraction failed, as typed values with a stable ``code``.

Exception tree::

    ExtractionError
    ├── EmptyDocumentError        empty_document
    ├── EncryptedDocumentError    encrypted_document
    ├── CorruptDocumentError      corrupt_document
    ├── UnsupportedFormatError    unsupported_format
    ├── ScannedPdfError           scanned_pdf
    ├── ExtractionTimeout         extraction_timeout
    └── DocumentTooLargeError     document_too_large

Each docstring doubles as the default message. Every error pickles (it may
cross a process boundary) and also travels as a JSON payload from the sandbox
child (see :meth:`ExtractionError.to_payload` and :func:`error_from_payload`),
so the parent never has to unpickle anything a document-parsing process wrote.
"""

from __future__ import annotations

import inspect
from typing import Any, ClassVar


class ExtractionError(Exception):
    """The document could not be turned into text."""

    code: ClassVar[str] = "extraction_error"

    def __init__(self, message: str | None = None) -> None:
        self.message = message or inspect.cleandoc(type(self).__doc__ or self.code)
        super().__init__(self.message)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.message,))

    def details(self) -> dict[str, int]:
        """Structured extras beyond ``code`` and ``message`` (none by default)."""
        return {}

    def to_payload(self) -> dict[str, Any]:
        """A JSON-ready description: ``code``, ``message`` and ``details``."""
        return {"code": self.code, "message": self.message, "details": self.details()}


class EmptyDocumentError(ExtractionError):
    """The document contains no text to search (it is empty or whitespace only)."""

    code = "empty_document"


class EncryptedDocumentError(ExtractionError):
    """The document is password-protected; remove the password and upload it again."""

    code = "encrypted_document"


class CorruptDocumentError(ExtractionError):
    """The document is damaged and could not be read; re-export or re-download it."""

    code = "corrupt_document"


class UnsupportedFormatError(ExtractionError):
    """This file type is not supported; upload PDF, DOCX, PPTX, XLSX, CSV, HTML, Markdown, text, or an image."""

    code = "unsupported_format"


class ScannedPdfError(ExtractionError):
    """This PDF is a scan with no text layer, and no legible text was recognised in its images."""

    code = "scanned_pdf"

    def __init__(
        self, pages_without_text: int, page_count: int, message: str | None = None
    ) -> None:
        self.pages_without_text = pages_without_text
        self.page_count = page_count
        super().__init__(
            message
            or (
                f"This PDF is a scan: {pages_without_text} of {page_count} pages have no text "
                "layer, and no legible text was recognised in their images"
            )
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.pages_without_text, self.page_count, self.message))

    def details(self) -> dict[str, int]:
        return {"pages_without_text": self.pages_without_text, "page_count": self.page_count}


class ExtractionTimeout(ExtractionError):
    """Reading the document took too long and was stopped; try a smaller file."""

    code = "extraction_timeout"


class DocumentTooLargeError(ExtractionError):
    """The document is larger than the allowed limits; split it or upload a smaller file."""

    code = "document_too_large"


_BY_CODE: dict[str, type[ExtractionError]] = {
    cls.code: cls
    for cls in (
        EmptyDocumentError,
        EncryptedDocumentError,
        CorruptDocumentError,
        UnsupportedFormatError,
        ExtractionTimeout,
        DocumentTooLargeError,
    )
}


def error_from_payload(payload: dict[str, Any]) -> ExtractionError:
    """Rebuild the typed error described by :meth:`ExtractionError.to_payload`."""
    code = str(payload.get("code", ""))
    message = str(payload.get("message", "")) or None
    if code == ScannedPdfError.code:
        details = payload.get("details") or {}
        return ScannedPdfError(
            int(details.get("pages_without_text", 0)), int(details.get("page_count", 0)), message
        )
    return _BY_CODE.get(code, CorruptDocumentError)(message)
