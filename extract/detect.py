"""Which kind of document is this? From the name before upload, from the bytes after.

Rules, in order:

* The bytes decide binary formats: ``%PDF-`` in the first KiB is a PDF; a ZIP
  with ``[Content_Types].xml`` and a Word, PowerPoint or Excel part is that
  Office kind; a PNG, JPEG, TIFF or WebP signature is an image (read by OCR).
  Any other binary signature (programs, GIFs, archives, legacy ``.doc``) is
  refused. A mismatched name only adds a warning.
* Text claiming a binary kind (a ``.pdf`` or ``application/pdf`` that is HTML or
  text) is refused: it is usually a web page saved in place of the document.
* Otherwise the declared kind (extension first, then content type) picks
  Markdown, CSV, HTML or text; with no usable declaration, HTML is sniffed.
"""

from __future__ import annotations

import codecs
import io
import zipfile
from collections.abc import Mapping
from pathlib import PurePosixPath

from extract.epub import is_epub
from extract.errors import CorruptDocumentError, EmptyDocumentError, UnsupportedFormatError
from extract.types import Kind

EXTENSION_KINDS: Mapping[str, Kind] = {
    ".pdf": "pdf",
    ".docx": "docx",
    ".pptx": "pptx",
    ".xlsx": "xlsx",
    ".epub": "epub",
    ".csv": "csv",
    ".tsv": "csv",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".md": "markdown",
    ".markdown": "markdown",
    ".txt": "text",
    ".text": "text",
    ".ipynb": "notebook",
    ".vtt": "webvtt",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".tif": "image",
    ".tiff": "image",
    ".webp": "image",
}
"""File extensions an upload may have, and the kind each one declares."""

ALLOWED_CONTENT_TYPES: Mapping[str, Kind] = {
    "application/pdf": "pdf",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": "docx",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation": "pptx",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet": "xlsx",
    "text/csv": "csv",
    "text/tab-separated-values": "csv",
    "text/html": "html",
    "application/xhtml+xml": "html",
    "text/markdown": "markdown",
    "text/x-markdown": "markdown",
    "text/plain": "text",
    "application/epub+zip": "epub",
    "application/x-ipynb+json": "notebook",
    "text/vtt": "webvtt",
    "image/png": "image",
    "image/jpeg": "image",
    "image/tiff": "image",
    "image/webp": "image",
}
"""Content types an upload may declare, and the kind each one declares."""

FORMAT_NAMES: Mapping[Kind, str] = {
    "pdf": "PDF",
    "docx": "Word",
    "pptx": "PowerPoint",
    "xlsx": "Excel",
    "epub": "EPUB",
    "csv": "CSV",
    "html": "HTML",
    "markdown": "Markdown",
    "text": "text",
    "notebook": "Jupyter notebooks",
    "webvtt": "WebVTT transcripts",
    "image": "images (PNG, JPEG, TIFF, WebP)",
}
"""What each kind is called when a person is told what may be uploaded, in that order."""


def _spoken_list(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


SUPPORTED_FORMATS = _spoken_list(list(FORMAT_NAMES.values()))
"""The kinds an upload may be, for people: ``"PDF, Word, …, Markdown or text"``."""

KIND_CONTENT_TYPES: Mapping[Kind, str] = {
    "pdf": "application/pdf",
    "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "epub": "application/epub+zip",
    "csv": "text/csv",
    "html": "text/html",
    "markdown": "text/markdown",
    "text": "text/plain",
    "notebook": "application/x-ipynb+json",
    "webvtt": "text/vtt",
    "image": "application/octet-stream",
}
"""The one media type of each kind: what a document of that kind is recorded and served as,
whatever type the client declared (a declaration only ever picks a kind). Images span four
formats, so their originals are plain downloads rather than one image type that would be
wrong for three of them."""

GENERIC_CONTENT_TYPES = frozenset(
    {"", "application/octet-stream", "binary/octet-stream", "application/x-download"}
)
"""Content types that say nothing about the format (the extension decides)."""

BINARY_KINDS: frozenset[Kind] = frozenset({"pdf", "docx", "pptx", "xlsx", "epub", "image"})

_IMAGE_SIGNATURES: tuple[bytes, ...] = (
    b"\x89PNG\r\n\x1a\n",
    b"\xff\xd8\xff",
    b"II*\x00",
    b"MM\x00*",
)
"""PNG, JPEG, and TIFF (little- and big-endian); WebP is ``RIFF....WEBP``."""

_OFFICE_PARTS: tuple[tuple[str, Kind], ...] = (
    ("word/document.xml", "docx"),
    ("ppt/presentation.xml", "pptx"),
    ("xl/workbook.xml", "xlsx"),
)
_REFUSED_SIGNATURES: tuple[tuple[bytes, str], ...] = (
    (b"MZ", "a Windows program"),
    (b"\x7fELF", "a Linux program"),
    (b"\xcf\xfa\xed\xfe", "a macOS program"),
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1",
     "a legacy Office file (.doc/.xls/.ppt); save it as .docx/.xlsx/.pptx"),
    (b"GIF8", "a GIF image; save it as PNG"),
    (b"\x1f\x8b", "a gzip archive"),
    (b"Rar!", "a RAR archive"),
    (b"7z\xbc\xaf", "a 7-Zip archive"),
    (b"{\\rtf", "an RTF document; save it as .docx or PDF"),
)  # fmt: skip
_TEXT_BOMS = (codecs.BOM_UTF8, codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)
_HTML_OPENINGS = ("<!doctype html", "<html", "<head", "<body")


def _normalise_content_type(content_type: str | None) -> str:
    return (content_type or "").split(";", 1)[0].strip().lower()


def declared_kind(filename: str, content_type: str | None) -> Kind | None:
    """The kind the name or content type claims (extension first), or None if neither does."""
    extension = PurePosixPath(filename.replace("\\", "/")).suffix.lower()
    if extension in EXTENSION_KINDS:
        return EXTENSION_KINDS[extension]
    return ALLOWED_CONTENT_TYPES.get(_normalise_content_type(content_type))


def kind_for_upload(filename: str, content_type: str | None) -> Kind:
    """The kind an upload claims to be, so unsupported types are refused before any byte moves.

    Raises:
        UnsupportedFormatError: when neither the extension nor the content type is supported.
    """
    kind = declared_kind(filename, content_type)
    if kind is not None:
        return kind
    extensions = ", ".join(sorted(EXTENSION_KINDS))
    raise UnsupportedFormatError(
        f"{filename!r} is not a supported file type; upload one of: {extensions}"
    )


def _office_kind(data: bytes) -> Kind:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = set(archive.namelist())
            if "[Content_Types].xml" in names:
                for part, kind in _OFFICE_PARTS:
                    if part in names:
                        return kind
            if is_epub(names, archive):
                return "epub"
    except (zipfile.BadZipFile, OSError, ValueError, KeyError) as exc:
        raise CorruptDocumentError(f"The file is a damaged ZIP container: {exc}") from exc
    raise UnsupportedFormatError(
        "This file is a ZIP archive, not a Word, PowerPoint, Excel or EPUB document; "
        "upload the documents themselves"
    )


def sniff_binary_kind(data: bytes) -> Kind | None:
    """PDF, Office or image kind from the bytes; None for text; refuses other binaries.

    Raises:
        UnsupportedFormatError: for programs, GIFs, archives and legacy Office files.
        CorruptDocumentError: for a damaged ZIP container.
    """
    if data.startswith(b"PK\x03\x04"):  # before %PDF-: a ZIP may store a PDF uncompressed
        return _office_kind(data)
    if b"%PDF-" in data[:1024]:
        return "pdf"
    if data.startswith(_IMAGE_SIGNATURES) or (data[:4] == b"RIFF" and data[8:12] == b"WEBP"):
        return "image"
    for signature, what in _REFUSED_SIGNATURES:
        if data.startswith(signature):
            raise UnsupportedFormatError(f"This file is {what}, which is not supported")
    if b"\x00" in data[:8192] and not data.startswith(_TEXT_BOMS):
        raise UnsupportedFormatError("This file is binary, not a supported document or text")
    return None


def looks_like_html(data: bytes) -> bool:
    """True when the text opens like an HTML page (doctype or html/head/body tag)."""
    head = data[:4096]
    for bom in _TEXT_BOMS:
        if head.startswith(bom):
            encoding = {codecs.BOM_UTF8: "utf-8-sig"}.get(bom, "utf-16")
            text = head.decode(encoding, errors="ignore")
            break
    else:
        text = head.decode("utf-8", errors="ignore")
    text = text.lstrip().lower()
    if text.startswith(_HTML_OPENINGS):
        return True
    return text.startswith("<") and any(tag in text for tag in ("<html", "<body"))


def detect_kind(data: bytes, filename: str, content_type: str | None) -> tuple[Kind, list[str]]:
    """The kind of ``data`` and any warnings about a misleading name (see module rules).

    Raises:
        EmptyDocumentError: for zero bytes.
        UnsupportedFormatError: for unsupported binaries or text posing as a binary kind.
        CorruptDocumentError: for a damaged ZIP container.
    """
    if not data:
        raise EmptyDocumentError("The file is empty (0 bytes)")
    declared = declared_kind(filename, content_type)
    sniffed = sniff_binary_kind(data)
    if sniffed is not None:
        if declared is not None and declared != sniffed:
            return sniffed, [
                f"{filename!r} was declared as {declared} but its content is {sniffed}; "
                f"read as {sniffed}"
            ]
        return sniffed, []
    html = looks_like_html(data)
    if declared in BINARY_KINDS:
        content = "an HTML page" if html else "text"
        raise UnsupportedFormatError(
            f"{filename!r} claims to be {str(declared).upper()} but contains {content} "
            "(often a web page saved in place of the document); upload the real file"
        )
    if declared is not None:
        return declared, []
    if data.lstrip(b"\xef\xbb\xbf").startswith(b"WEBVTT"):
        return "webvtt", []
    return ("html" if html else "text"), []
