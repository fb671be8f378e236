"""Finding a PDF page's figures and their captions (extract.figures), kept with the extraction."""

from __future__ import annotations

import pymupdf

from extract import extract_document
from extract.figures import find_figures
from extract.page_markers import slice_pages
from extract.types import Extraction
from extract.wire import from_wire, to_wire
from tests.support.figure_pdf import CHART_CAPTION, PHOTO_CAPTION, figure_pdf


def test_a_chart_and_a_photo_are_figures_with_their_captions() -> None:
    with pymupdf.open(stream=figure_pdf()) as doc:
        chart, photo = find_figures(doc[0], 1)
    assert (chart.label, chart.caption) == ("Figure 1", CHART_CAPTION)
    assert (photo.label, photo.caption) == ("Figure 2", PHOTO_CAPTION)
    assert chart.box[1] == 140 and chart.box[3] > 352  # the caption is inside the box
    assert photo.page == 1


def test_furniture_rules_and_a_ruled_table_are_not_figures() -> None:
    with pymupdf.open(stream=figure_pdf()) as doc:
        boxes = [figure.box for figure in find_figures(doc[0], 1)]
    assert all(box[1] > 60 for box in boxes)  # not the logo nor the rule in the top margin
    assert all(box[3] < 680 for box in boxes)  # not the table


def test_a_page_without_figures_has_none_and_a_full_page_picture_is_not_one() -> None:
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "Only text here. Figure 1 is elsewhere.")
    scan = doc.new_page()
    scan.insert_image(scan.rect, stream=pymupdf.open(stream=figure_pdf())[0].get_pixmap().tobytes())
    assert find_figures(doc[0], 1) == []
    assert find_figures(doc[1], 2) == []


def test_the_extraction_keeps_the_figures_across_the_sandbox_wire() -> None:
    extraction = extract_document(figure_pdf(), "figures.pdf", None)
    assert [figure.label for figure in extraction.figures] == ["Figure 1", "Figure 2"]
    assert CHART_CAPTION.split(":")[0] in extraction.markdown  # the caption is searchable text
    again = from_wire(to_wire(extraction), Extraction, "text")
    assert again.figures == extraction.figures


def test_the_words_inside_a_figure_are_text_of_its_page() -> None:
    """A chart's own labels are searchable like any passage and cite the chart's page."""
    with pymupdf.open(stream=figure_pdf()) as doc:
        doc.new_page().insert_text((72, 72), "A second page about something else.")
        doc[0].insert_text((300, 165), "meltwater discharge", fontsize=9)  # inside Figure 1
        data = doc.tobytes()

    extraction = extract_document(data, "figures.pdf", None)

    [chart] = [figure for figure in extraction.figures if figure.label == "Figure 1"]
    assert chart.page == 1
    first_page = slice_pages(extraction.markdown, 1, 1)
    assert "meltwater discharge" in first_page
    assert "meltwater" not in slice_pages(extraction.markdown, 2, 2)
