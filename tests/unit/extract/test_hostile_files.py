"""Hostile files are reported for what they are, with a reason a person understands."""

from __future__ import annotations

import io
import re
import time
import zipfile

import openpyxl
import pymupdf
import pytest

from extract import (
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionLimits,
    extract_document,
    extract_in_sandbox,
)
from extract.office import MAX_WORKBOOK_CELLS

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _workbook(cells: dict[str, str]) -> bytes:
    workbook = openpyxl.Workbook()
    sheet = workbook.active
    assert sheet is not None
    sheet.title = "Survey"
    for ref, value in cells.items():
        sheet[ref] = value
    buffer = io.BytesIO()
    workbook.save(buffer)
    return buffer.getvalue()


def _declare_dimension(data: bytes, ref: str) -> bytes:
    """The same workbook, its sheet claiming to span ``ref``."""
    source = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            body = source.read(item.filename)
            if item.filename == "xl/worksheets/sheet1.xml":
                body, count = re.subn(
                    rb'<dimension ref="[^"]*"', f'<dimension ref="{ref}"'.encode(), body
                )
                assert count == 1
            target.writestr(item, body)
    return out.getvalue()


def test_a_sheet_declaring_every_cell_of_the_grid_is_read_for_the_cells_it_has() -> None:
    # Read as declared, each of the million rows up to the last one would be 16,384 cells.
    cells = {"A1": "Station", "B1": "Depth", "A2": "North", "B2": "12", "A1048576": "end"}
    data = _declare_dimension(_workbook(cells), "A1:XFD1048576")
    started = time.monotonic()

    extraction = extract_in_sandbox(data, "survey.xlsx", XLSX, limits=ExtractionLimits())

    assert "| Station | Depth |" in extraction.markdown
    assert "| North | 12 |" in extraction.markdown
    assert "| end |" in extraction.markdown
    assert time.monotonic() - started < 30


def test_a_workbook_whose_rows_span_too_many_cells_is_too_large_saying_why() -> None:
    rows = MAX_WORKBOOK_CELLS // 16_384 + 10
    cells = {f"A{n}": "x" for n in range(1, rows + 1)} | {
        f"XFD{n}": "y" for n in range(1, rows + 1)
    }
    data = _workbook(cells)

    with pytest.raises(DocumentTooLargeError) as raised:
        extract_in_sandbox(data, "wide.xlsx", XLSX, limits=ExtractionLimits())

    assert f"more than {MAX_WORKBOOK_CELLS:,} cells" in raised.value.message
    assert "'Survey'" in raised.value.message


def _nested_forms_pdf(depth: int, *, blank_pages: int = 0) -> bytes:
    """One page whose text sits inside ``depth`` Form XObjects, each drawing the next."""
    document = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 72), "Glaciers carve valleys over thousands of years.", fontsize=11)
    contents = page.get_contents()
    text_stream = b"".join(document.xref_stream(xref) for xref in contents)
    resources = document.xref_get_key(page.xref, "Resources")[1]
    inner = None
    for _ in range(depth):
        xref = document.get_new_xref()
        if inner is None:
            document.update_object(
                xref,
                f"<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources {resources} >>",
            )
            document.update_stream(xref, text_stream)
        else:
            document.update_object(
                xref,
                "<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] "
                f"/Resources << /XObject << /X {inner} 0 R >> >> >>",
            )
            document.update_stream(xref, b"/X Do")
        inner = xref
    document.xref_set_key(page.xref, "Resources", f"<< /XObject << /X {inner} 0 R >> >>")
    document.update_stream(contents[0], b"/X Do")
    for xref in contents[1:]:
        document.update_stream(xref, b"")
    for _ in range(blank_pages):
        document.new_page()
    data: bytes = document.tobytes()
    document.close()
    return data


def test_a_pdf_nested_too_deeply_is_corrupt_saying_so() -> None:
    with pytest.raises(CorruptDocumentError) as raised:
        extract_document(_nested_forms_pdf(300), "deep.pdf", "application/pdf")

    assert "nested more deeply than the PDF reader allows" in raised.value.message


def test_a_pdf_whose_only_text_is_nested_too_deeply_is_not_called_empty() -> None:
    with pytest.raises(CorruptDocumentError) as raised:
        extract_document(_nested_forms_pdf(300, blank_pages=2), "deep.pdf", "application/pdf")

    assert raised.value.code == "corrupt_document"
    assert "Page 1 of this PDF could not be read" in raised.value.message
    assert "nested more deeply" in raised.value.message


def test_a_pdf_nested_within_the_readers_limit_reads_normally() -> None:
    extraction = extract_document(_nested_forms_pdf(20), "deep.pdf", "application/pdf")

    assert "Glaciers carve valleys" in extraction.markdown
