from __future__ import annotations

import io
import zipfile

import pytest

from extract import CorruptDocumentError, DocumentTooLargeError, ExtractionLimits, extract_document
from tests.unit.extract import samples


def test_docx_keeps_headings_lists_and_tables_in_order() -> None:
    extraction = extract_document(samples.docx_report(), "summary.docx", None)

    assert extraction.kind == "docx"
    assert extraction.page_count == 1
    markdown = extraction.markdown
    assert markdown.index("# Annual Summary") < markdown.index("## Details")
    assert "- Watch the margins" in markdown
    assert "| Item | Cost \\| net |" in markdown
    assert "| Paper | 12 |" in markdown


def test_pptx_has_one_page_per_slide_with_titles_tables_and_notes() -> None:
    extraction = extract_document(samples.pptx_deck(), "deck.pptx", None)

    assert extraction.kind == "pptx"
    assert extraction.page_count == 2
    first = extraction.markdown[: extraction.page_offsets[1]]
    second = extraction.markdown[extraction.page_offsets[1] :]
    assert "## Slide 1: Roadmap" in first
    assert "Ship the search API" in first
    assert "> Notes: Mention the beta users" in first
    assert second.startswith("<!-- page 2 -->\n\n## Slide 2")
    assert "| Q1 | Beta |" in second


def test_xlsx_has_one_page_per_sheet_with_a_table() -> None:
    extraction = extract_document(samples.xlsx_workbook(), "prices.xlsx", None)

    assert extraction.kind == "xlsx"
    assert extraction.page_count == 2
    first = extraction.markdown[: extraction.page_offsets[1]]
    assert "## Sheet: Prices" in first
    assert "| Fruit | Price |" in first
    assert "| Pear\\|Green | 2 |" in first
    assert extraction.page_of(extraction.markdown.index("Prices include tax")) == 2


def _with_bomb_member(office_file: bytes, size: int) -> bytes:
    """The same Office file plus one highly compressible member of ``size`` bytes."""
    buffer = io.BytesIO(office_file)
    with zipfile.ZipFile(buffer, "a", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("customXml/padding.xml", b"\0" * size)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("build", "filename"),
    [(samples.docx_report, "bomb.docx"), (samples.xlsx_workbook, "bomb.xlsx")],
)
def test_office_zip_bomb_is_stopped_before_parsing(build: object, filename: str) -> None:
    assert callable(build)
    limits = ExtractionLimits(max_unpacked_bytes=8 * 1024 * 1024)
    data = _with_bomb_member(build(), 16 * 1024 * 1024)
    assert len(data) < 100 * 1024  # tiny on disk

    with pytest.raises(DocumentTooLargeError, match="zip bomb"):
        extract_document(data, filename, None, limits=limits)


def test_xlsx_with_more_sheets_than_allowed_is_too_large() -> None:
    with pytest.raises(DocumentTooLargeError, match="2 sheets"):
        extract_document(
            samples.xlsx_workbook(), "w.xlsx", None, limits=ExtractionLimits(max_pages=1)
        )


def test_docx_with_a_damaged_part_is_corrupt() -> None:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        archive.writestr("word/document.xml", "<not-closed")

    with pytest.raises(CorruptDocumentError):
        extract_document(buffer.getvalue(), "broken.docx", None)
