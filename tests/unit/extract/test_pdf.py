from __future__ import annotations

from typing import Any

import pymupdf
import pytest

from extract import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EncryptedDocumentError,
    ExtractionLimits,
    OcrOptions,
    ScannedPdfError,
    extract_document,
)
from extract.pdf import extract_pdf_part
from tests.unit.extract import samples


def test_pdf_keeps_heading_table_and_page_markers() -> None:
    extraction = extract_document(samples.pdf_report(), "report.pdf", "application/pdf")

    assert extraction.kind == "pdf"
    assert extraction.page_count == 2
    assert "# Quarterly Report" in extraction.markdown
    assert "|Region|Revenue|" in extraction.markdown.replace(" ", "")
    assert "|North|120|" in extraction.markdown.replace(" ", "")
    second = extraction.page_offsets[1]
    assert extraction.markdown[second:].startswith("<!-- page 2 -->\n")
    assert extraction.page_of(extraction.markdown.index("second page explains")) == 2
    assert extraction.page_of(extraction.markdown.index("North")) == 1
    assert extraction.warnings == ()


def test_pdf_pages_after_the_layout_budget_fall_back_to_plain_text() -> None:
    limits = ExtractionLimits(layout_budget_seconds=0.0, layout_every_page=True)

    extraction = extract_document(samples.pdf_report(), "report.pdf", None, limits=limits)

    assert extraction.page_count == 2
    assert "Quarterly Report" in extraction.markdown
    assert "second page explains" in extraction.markdown
    assert any("page 1-2 extracted as plain text" in warning for warning in extraction.warnings)


def test_pdf_with_only_scanned_pages_is_refused_with_counts() -> None:
    with pytest.raises(ScannedPdfError) as raised:
        extract_document(samples.pdf_pages("ss"), "scan.pdf", None)

    assert (raised.value.pages_without_text, raised.value.page_count) == (2, 2)
    assert "2 of 2 pages have no text" in raised.value.message
    assert "text recognition (OCR) found nothing legible" in raised.value.message
    assert "enable OCR" not in raised.value.message


def test_pdf_where_most_pages_are_scans_is_refused() -> None:
    with pytest.raises(ScannedPdfError) as raised:
        extract_document(samples.pdf_pages("tss"), "mostly-scan.pdf", None)

    assert (raised.value.pages_without_text, raised.value.page_count) == (2, 3)


def test_pdf_with_some_scanned_pages_succeeds_with_a_warning() -> None:
    extraction = extract_document(samples.pdf_pages("ttst"), "mixed.pdf", None)

    assert extraction.page_count == 4
    assert "Page 4 has a real text layer" in extraction.markdown
    assert any(
        "1 of 4 pages have no text layer" in w and "page 3" in w for w in extraction.warnings
    )


def test_pdf_scan_with_ocr_turned_off_says_so() -> None:
    limits = ExtractionLimits(ocr=OcrOptions(engine="off"))

    with pytest.raises(ScannedPdfError) as raised:
        extract_document(samples.pdf_pages("ss"), "scan.pdf", None, limits=limits)

    assert "OCR) is turned off (SHORTLIST_OCR__ENGINE=off)" in raised.value.message


def test_pdf_needing_a_user_password_is_refused() -> None:
    data = samples.pdf_encrypted(user_password="secret", owner_password="owner")

    with pytest.raises(EncryptedDocumentError):
        extract_document(data, "locked.pdf", None)


def test_pdf_with_only_an_owner_password_is_extracted() -> None:
    data = samples.pdf_encrypted(user_password="", owner_password="owner")

    assert "Confidential figures" in extract_document(data, "restricted.pdf", None).markdown


def test_pdf_with_more_pages_than_allowed_is_too_large() -> None:
    with pytest.raises(DocumentTooLargeError, match="3 pages, more than the 2 allowed"):
        extract_document(
            samples.pdf_pages("ttt"), "long.pdf", None, limits=ExtractionLimits(max_pages=2)
        )


def test_truncated_pdf_is_corrupt() -> None:
    with pytest.raises(CorruptDocumentError):
        extract_document(b"%PDF-1.7\n%%EOF\n", "broken.pdf", None)


def test_a_page_without_figures_tables_or_columns_takes_the_fast_path() -> None:
    document: Any = pymupdf.open()
    page = document.new_page()
    page.insert_text((72, 80), "Method", fontsize=20)
    for line, top in enumerate(range(120, 400, 14)):
        page.insert_text((72, top), f"Line {line} of the method, in body text.", fontsize=10)
    page.insert_text((72, 420), "Results", fontname="hebo", fontsize=10)
    page.insert_text((72, 436), "The results follow the method.", fontsize=10)
    data = bytes(document.tobytes())

    fast = extract_pdf_part(data, ExtractionLimits())
    slow = extract_pdf_part(data, ExtractionLimits(layout_every_page=True))

    assert fast.simple == (0,) and slow.simple == ()
    assert fast.bodies[0].startswith("# Method\n\nLine 0 of the method")
    assert "### Results\n\nThe results follow the method." in fast.bodies[0]
    assert [line for line in slow.bodies[0].splitlines() if line.startswith("#")]


def test_a_page_with_a_ruled_table_is_left_to_the_layout_model() -> None:
    part = extract_pdf_part(samples.pdf_report(), ExtractionLimits(), range(0, 1))

    assert part.simple == ()
    assert "|North|120|" in part.bodies[0].replace(" ", "")


def _prose_page(document: Any) -> Any:
    page = document.new_page(width=595, height=842)
    page.insert_text((72, 40), "Annual Manual", fontsize=12)  # the running head...
    page.insert_text((480, 40), "page 7", fontsize=12)  # ...with its page number beside it
    page.insert_text((72, 110), "Method", fontsize=20)
    for line, top in enumerate(range(140, 300, 14)):
        page.insert_text((72, top), f"Line {line} of the method, in body text.", fontsize=10)
    return page


def _picture(page: Any, rect: tuple[float, float, float, float]) -> None:
    pixmap = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 40, 40), False)
    pixmap.set_rect(pixmap.irect, (40, 90, 160))
    page.insert_image(pymupdf.Rect(*rect), pixmap=pixmap)


def test_a_page_with_a_running_head_and_a_picture_no_text_overlaps_takes_the_fast_path() -> None:
    document: Any = pymupdf.open()
    _picture(_prose_page(document), (72, 320, 400, 600))  # a screenshot below the prose

    part = extract_pdf_part(bytes(document.tobytes()), ExtractionLimits())

    assert part.simple == (0,)
    assert part.bodies[0].startswith("Annual Manual")  # the running head is no heading
    assert "# Method\n\nLine 0 of the method" in part.bodies[0]


def test_a_page_with_text_over_a_picture_is_left_to_the_layout_model() -> None:
    document: Any = pymupdf.open()
    page = _prose_page(document)
    _picture(page, (72, 320, 400, 600))
    page.insert_text((100, 400), "Figure label", fontsize=10)

    part = extract_pdf_part(bytes(document.tobytes()), ExtractionLimits())

    assert part.simple == ()
