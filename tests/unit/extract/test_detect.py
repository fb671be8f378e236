from __future__ import annotations

import pytest

from extract import (
    ALLOWED_CONTENT_TYPES,
    EXTENSION_KINDS,
    KINDS,
    DocumentTooLargeError,
    EmptyDocumentError,
    ExtractionLimits,
    UnsupportedFormatError,
    extract_document,
    kind_for_upload,
)
from extract.detect import (
    FORMAT_NAMES,
    GENERIC_CONTENT_TYPES,
    KIND_CONTENT_TYPES,
    SUPPORTED_FORMATS,
    detect_kind,
)
from tests.unit.extract import samples


@pytest.mark.parametrize(
    ("filename", "content_type", "kind"),
    [
        ("paper.PDF", None, "pdf"),
        ("deck.pptx", "application/octet-stream", "pptx"),
        ("export", "text/csv; charset=utf-8", "csv"),
        ("notes.md", "text/plain", "markdown"),
    ],
)
def test_upload_kind_comes_from_extension_then_content_type(
    filename: str, content_type: str | None, kind: str
) -> None:
    assert kind_for_upload(filename, content_type) == kind


@pytest.mark.parametrize(
    ("filename", "content_type"), [("setup.exe", None), ("photo", "image/gif")]
)
def test_upload_of_unsupported_type_is_refused_before_reading(
    filename: str, content_type: str | None
) -> None:
    with pytest.raises(UnsupportedFormatError, match="not a supported file type"):
        kind_for_upload(filename, content_type)


def test_office_kind_comes_from_the_zip_members_not_the_name() -> None:
    kind, warnings = detect_kind(samples.xlsx_workbook(), "misnamed.docx", None)

    assert kind == "xlsx"
    assert "declared as docx but its content is xlsx" in warnings[0]


def test_pdf_named_as_text_is_read_as_pdf() -> None:
    extraction = extract_document(samples.pdf_pages("t"), "report.txt", "text/plain")

    assert extraction.kind == "pdf"
    assert any("declared as text" in warning for warning in extraction.warnings)


def test_pdf_that_is_really_html_is_refused() -> None:
    page = b"<!doctype html><html><body><p>Please log in</p></body></html>"

    with pytest.raises(UnsupportedFormatError, match="claims to be PDF but contains an HTML page"):
        extract_document(page, "invoice.pdf", "application/pdf")


def test_program_renamed_to_pdf_is_unsupported() -> None:
    program = b"MZ\x90\x00\x03\x00\x00\x00\x04\x00\x00\x00\xff\xff" + b"\x00" * 64

    with pytest.raises(UnsupportedFormatError, match="Windows program"):
        extract_document(program, "invoice.pdf", "application/pdf")


def test_plain_zip_archive_is_unsupported() -> None:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.txt", "hello")

    with pytest.raises(UnsupportedFormatError, match="ZIP archive"):
        extract_document(buffer.getvalue(), "bundle.docx", None)


def test_empty_bytes_are_an_empty_document() -> None:
    with pytest.raises(EmptyDocumentError):
        extract_document(b"", "empty.pdf", None)


def test_html_is_sniffed_when_the_name_says_nothing() -> None:
    assert detect_kind(b"\n  <!DOCTYPE html><p>x</p>", "download", None) == ("html", [])
    assert detect_kind(b"just words", "download", None) == ("text", [])


def test_bytes_over_the_limit_are_refused_before_parsing() -> None:
    with pytest.raises(DocumentTooLargeError, match="more than"):
        extract_document(b"x" * 2048, "big.txt", None, limits=ExtractionLimits(max_bytes=1024))


def test_every_kind_has_a_name_for_people_and_a_default_content_type() -> None:
    assert set(FORMAT_NAMES) == set(KINDS), "name each new kind in extract.detect.FORMAT_NAMES"
    assert set(EXTENSION_KINDS.values()) <= set(KIND_CONTENT_TYPES)
    # A kind's own type declares that kind again (images, four formats, are plain downloads).
    assert all(
        ALLOWED_CONTENT_TYPES.get(KIND_CONTENT_TYPES[kind]) == kind
        or (kind == "image" and KIND_CONTENT_TYPES[kind] in GENERIC_CONTENT_TYPES)
        for kind in KINDS
    )
    for name in FORMAT_NAMES.values():
        assert name in SUPPORTED_FORMATS
    assert SUPPORTED_FORMATS.endswith(f" or {list(FORMAT_NAMES.values())[-1]}")
