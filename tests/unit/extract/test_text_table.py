"""Rule-less tables from the text layer, and which pages the fast path takes (issue #26).

Real pages of the shared corpus: the IRS manual's LINE / POSITION / DESCRIPTION
exhibits (the table the layout model gives, built from the text layer), its prose
with section numbers in the margin, a ruled table (still the model's), and pages
of other documents that look like rows side by side but are not tables (columns of
prose, a bulleted list).
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any
from unicodedata import normalize

import pymupdf
import pytest

from extract import ExtractionLimits, OcrOptions
from extract.fidelity import compare, markdown_words, words
from extract.pdf import extract_pdf_part
from extract.simple_page import needs_layout, simple_markdown
from extract.text_table import TextLine, find_tables
from tests.support.paths import CORPUS_DIR
from tests.support.structure import structure_counts

pytestmark = pytest.mark.skipif(
    not (CORPUS_DIR / "manifest.json").exists(), reason=f"no corpus under {CORPUS_DIR}"
)

IRS = "long_100plus/pdf2image-memory-error-test-400p.pdf"
_CELL_MARKUP = re.compile(r"\*\*|<br>")


def _page(path: str, number: int) -> Any:
    document: Any = pymupdf.open(CORPUS_DIR / path)
    return document[number - 1]


def _fast(page: Any) -> str | None:
    """The fast path's Markdown for a page, or None when the page is the model's."""
    blocks = page.get_text("blocks")
    has_images = bool(page.get_images()) or any(block[6] == 1 for block in blocks)
    if needs_layout(page, blocks, has_images):
        return None
    simple = simple_markdown(page)
    return None if simple is None else simple.markdown


def _table_rows(markdown: str) -> list[tuple[str, ...]]:
    """The rows of every Markdown table, cells without bold or line breaks, rule rows left out."""
    rows = []
    for line in markdown.splitlines():
        if line.startswith("|") and not re.fullmatch(r"\|(?:\s*:?-{3,}:?\s*\|)+\s*", line):
            cells = _CELL_MARKUP.sub(" ", line.strip()[1:-1]).split("|")
            rows.append(tuple(" ".join(normalize("NFKC", cell).split()) for cell in cells))
    return rows


def test_a_rule_less_exhibit_gives_the_table_the_layout_model_gives() -> None:
    data = (CORPUS_DIR / IRS).read_bytes()
    limits = ExtractionLimits(timeout_seconds=600, ocr=OcrOptions(engine="off"))

    fast = extract_pdf_part(data, limits, range(34, 35))
    model = extract_pdf_part(data, replace(limits, layout_every_page=True), range(34, 35))

    assert fast.simple == (34,) and model.simple == ()
    rows = _table_rows(fast.bodies[0])
    assert rows[0] == ("LINE", "POSITION", "DESCRIPTION AND VALIDITY")
    assert (
        "",
        "",
        "Caution Indicator:*CAU*",
    ) in rows  # a continuation line is a row, as the model has it
    assert rows == _table_rows(model.bodies[0])
    assert structure_counts(fast.bodies[0])["tables"] == 1


def test_a_row_in_the_running_foot_band_stays_in_its_table() -> None:
    markdown = _fast(_page(IRS, 35))

    assert markdown is not None
    assert "|8|05-10|Tax Period|" in markdown  # 717 pt down a 792 pt page: the foot band
    assert "|Cat. No." not in markdown  # the running foot itself is below the rule


def test_prose_with_section_numbers_in_the_margin_takes_the_fast_path_as_paragraphs() -> None:
    page = _page(IRS, 7)

    markdown = _fast(page)

    assert markdown is not None
    assert structure_counts(markdown)["tables"] == 0
    assert "2.3.59.1 (12-12-2022) Program Scope and Objectives\n\n(1) Overview:" in markdown
    fidelity = compare(words(page.get_text()), markdown_words(markdown))
    assert fidelity.recall == 1.0 and fidelity.precision == 1.0


def test_a_table_drawn_with_straight_rules_is_left_to_the_layout_model() -> None:
    page = _page(IRS, 8)  # a small ruled table: six straight lines besides the page's rules
    blocks = page.get_text("blocks")

    assert needs_layout(page, blocks, has_images=False)


def test_straight_lines_count_as_rules_and_underlines_do_not() -> None:
    documents: list[Any] = [pymupdf.open(), pymupdf.open()]
    ruled = documents[0].new_page()
    for top in (100, 120, 140, 160):
        ruled.draw_line((72, top), (400, top))
    ruled.insert_text((80, 115), "Name   Value", fontsize=10)
    underlined = documents[1].new_page()
    underlined.insert_text((72, 100), "A paragraph with a link in it, and more words.", fontsize=10)
    for top in (102, 116, 130, 144):
        underlined.insert_text((72, top + 12), "More words of the same paragraph.", fontsize=10)
        underlined.draw_line((72, top + 13), (120, top + 13))

    assert needs_layout(ruled, ruled.get_text("blocks"), has_images=False)
    assert not needs_layout(underlined, underlined.get_text("blocks"), has_images=False)


@pytest.mark.parametrize(
    ("path", "number"),
    [
        ("tables/i1040nr.pdf", 32),  # three columns of prose, lines side by side
        ("papers/federal-register-2020-17221.pdf", 14),  # the same, paragraph blocks
        ("papers/test_4026.pdf", 10),  # a bulleted list: bullets beside their text
        ("long_100plus/mupdf_explored.pdf", 265),  # a code listing in two columns
    ],
)
def test_rows_side_by_side_that_are_no_table_stay_with_the_layout_model(
    path: str, number: int
) -> None:
    assert _fast(_page(path, number)) is None


def test_a_word_hyphenated_across_two_rows_of_a_table_stays_one_word() -> None:
    page = _page("long_100plus/GeoTopo-komprimiert.pdf", 113)  # a list of symbols

    markdown = _fast(page)

    assert markdown is not None and structure_counts(markdown)["tables"] == 1
    assert "Bemerkung 37" in markdown
    fidelity = compare(words(page.get_text()), markdown_words(markdown))
    assert fidelity.recall == 1.0 and fidelity.precision == 1.0


def _line(block: int, x0: float, top: float, text: str) -> TextLine:
    span = {"text": text, "flags": 0, "size": 10.0}
    return TextLine(block, 0, (x0, top, x0 + 6.0 * len(text), top + 10.0), (span,))


def test_a_cell_spanning_two_columns_is_no_table_to_build() -> None:
    rows = [
        [_line(0, 72, 100, "Code"), _line(0, 200, 100, "Meaning")],
        [_line(1, 72, 120, "01"), _line(1, 200, 120, "First")],
        [_line(2, 72, 140, "02"), _line(2, 200, 140, "Second")],
        [_line(3, 72, 160, "03 and a cell running on"), _line(3, 250, 160, "x")],
    ]
    lines = [line for row in rows for line in row]

    assert [table.rows for table in find_tables(lines[:6], 612, (79, 713)) or []] == [
        (("Code", "Meaning"), ("01", "First"), ("02", "Second"))
    ]
    assert find_tables(lines, 612, (79, 713)) is None
