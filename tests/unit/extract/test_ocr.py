"""Which pages are recognised, in what order their text comes out, and within which budget.

The rule, layout and budget tests run without an engine (a stand-in that
implements :class:`extract.ocr.OcrEngine` returns fixed boxes, and a manual
clock makes time budgets exact). The recall tests in ``test_ocr_engines.py``
use the real RapidOCR.
"""

from __future__ import annotations

import pytest

from extract import ExtractionLimits, OcrOptions, extract_document
from extract.ocr import (
    NoEngine,
    OcrResult,
    PageImage,
    TextBox,
    TextLayer,
    layout_text,
    ocr_reason,
    recognise_pages,
    select_engine,
)
from extract.pdf import extract_pdf
from tests.unit.extract import samples

GOOD_TEXT = "The quarterly report shows revenue grew in every region. " * 5


@pytest.mark.parametrize(
    ("layer", "reason"),
    [
        (TextLayer(GOOD_TEXT, text_area=0.4, image_area=0.0), None),
        (TextLayer(GOOD_TEXT, text_area=0.3, image_area=0.6), None),  # a page with a figure
        (TextLayer("", text_area=0.0, image_area=1.0), "no_text"),
        (TextLayer("12", text_area=0.001, image_area=0.9), "no_text"),
        (TextLayer("", text_area=0.0, image_area=0.0, ink=0.05), "no_text"),  # outlined text
        (TextLayer("", text_area=0.0, image_area=0.0, ink=0.0), None),  # a blank page
        (TextLayer("\x03\x04\x05\x06 Overview \x07\x08\x0e\x0f\x10", 0.5, 0.0), "garbage_text"),
        (TextLayer("\ufffd" * 40 + " words here", 0.5, 0.0), "garbage_text"),
        (TextLayer('"7+%-', text_area=0.0005, image_area=0.0), "garbage_text"),
        (TextLayer("HoMep KoppeKn1pOBKH Cl>opMa CyMMa ynnaTe " * 8, 0.5, 0.0), "not_words"),
        (TextLayer("Downloaded from the archive on 2024-01-01", 0.01, 0.95), "tiny_text"),
        (TextLayer(samples.POOR_OCR, text_area=0.5, image_area=1.0), "misread_text"),  # over a scan
        (TextLayer(samples.POOR_OCR, text_area=0.5, image_area=0.0), None),  # born digital: its own
    ],
)
def test_pages_are_recognised_only_when_their_text_layer_is_missing_or_unusable(
    layer: TextLayer, reason: str | None
) -> None:
    assert ocr_reason(layer) == reason


def test_forcing_recognises_good_pages_too() -> None:
    assert ocr_reason(TextLayer(GOOD_TEXT, 0.4, 0.0), force=True) == "forced"


def _line(x0: float, y0: float, text: str, width: float = 400, height: float = 20) -> TextBox:
    return TextBox(x0, y0, x0 + width, y0 + height, text)


def test_two_columns_with_aligned_lines_are_read_column_by_column() -> None:
    # Lines of both columns share baselines and overlap vertically, as engine boxes do.
    boxes = [_line(100, 50, "Title across both columns", width=900)]
    for row in range(4):
        boxes.append(_line(100, 100 + row * 18, f"left{row}"))
        boxes.append(_line(520, 100 + row * 18, f"right{row}"))

    text = layout_text(boxes)

    assert text.index("Title") < text.index("left0")
    assert text.index("left3") < text.index("right0")
    assert "left0 left1 left2 left3" in text


def test_columns_stay_apart_when_one_long_line_juts_into_the_gutter() -> None:
    boxes = []
    for row in range(30):
        width = 470 if row == 17 else 400  # crosses into the right column's first 20 px
        boxes.append(_line(100, 100 + row * 18, f"left{row}", width=width))
        boxes.append(_line(550, 100 + row * 18, f"right{row}"))

    text = layout_text(boxes)

    assert text.index("left29") < text.index("right0")
    assert "left16 left17 left18" in text


def test_paragraphs_are_kept_apart_and_hyphenated_words_joined() -> None:
    boxes = [
        _line(100, 100, "A first para-"),
        _line(100, 122, "graph ends here."),
        _line(100, 200, "A second paragraph."),
    ]

    assert layout_text(boxes) == "A first paragraph ends here.\n\nA second paragraph."


class _StandIn:
    """An engine that reads every page as the same line, and lets the clock tick per page."""

    name = "stand-in"

    def __init__(self, clock: _Clock, seconds_per_page: float = 1.0) -> None:
        self.pages = 0
        self._clock = clock
        self._seconds = seconds_per_page

    def recognise(self, image: PageImage) -> list[TextBox]:
        self.pages += 1
        self._clock.now += self._seconds
        return [TextBox(10, 10, 300, 30, f"recognised line number {self.pages}")]


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _page(_index: int) -> PageImage:
    samples_ = bytearray(b"\xff" * 100 * 40)
    samples_[1000:1400] = b"\x00" * 400  # a dark bar: not blank
    return PageImage(100, 40, bytes(samples_))


def test_pages_past_the_page_budget_are_left_out_with_a_warning() -> None:
    clock = _Clock()
    engine = _StandIn(clock)

    result = recognise_pages(
        _page, range(5), OcrOptions(max_pages=2), deadline=1e9, clock=clock, engine=engine
    )

    assert engine.pages == 2
    assert result.recognised_pages == (1, 2)
    assert result.over_page_budget == [2, 3, 4]
    assert any("page 3-5 not recognised" in w.lower() for w in result.warnings())
    assert any("on page 1-2" in w for w in result.warnings())


def test_pages_past_the_time_budget_are_left_out_with_a_warning() -> None:
    clock = _Clock()
    engine = _StandIn(clock, seconds_per_page=4.0)

    result = recognise_pages(
        _page, range(10), OcrOptions(page_seconds=1.0), deadline=1e9, clock=clock, engine=engine
    )

    # 10 pages x 1 s = 10 s budget; each page takes 4 s: pages 1-2 fit, page 3 would end at 12 s.
    assert engine.pages == 2
    assert result.over_time_budget == list(range(2, 10))
    assert any("OCR time budget of 10 s was used up" in w for w in result.warnings())


def test_the_deadline_bounds_the_time_budget() -> None:
    clock = _Clock()
    engine = _StandIn(clock, seconds_per_page=1.0)

    result = recognise_pages(
        _page, range(10), OcrOptions(), deadline=3.0, clock=clock, engine=engine
    )

    assert engine.pages == 3
    assert len(result.over_time_budget) == 7


def test_a_blank_page_image_is_not_handed_to_the_engine() -> None:
    clock = _Clock()
    engine = _StandIn(clock)

    result = recognise_pages(
        lambda _: PageImage(50, 50, b"\xf0" * 2500),
        [0],
        OcrOptions(),
        deadline=1e9,
        clock=clock,
        engine=engine,
    )

    assert engine.pages == 0
    assert result.illegible == [0]


def test_recognised_pdf_pages_keep_markers_offsets_and_are_flagged() -> None:
    clock = _Clock()
    engine = _StandIn(clock, seconds_per_page=0.0)
    data = samples.pdf_pages("tdt")

    extraction = extract_pdf(data, ExtractionLimits(), ocr=engine, clock=clock)

    assert extraction.page_count == 3
    assert extraction.ocr_pages == (2,)
    assert engine.pages == 1  # the text pages were not recognised
    second = extraction.markdown[extraction.page_offsets[1] : extraction.page_offsets[2]]
    assert second.startswith("<!-- page 2 -->\n")
    assert "recognised line number 1" in second
    assert extraction.page_of(extraction.markdown.index("recognised line")) == 2
    assert any(
        "Text recognised from images (OCR, stand-in) on page 2" in w for w in extraction.warnings
    )


def test_ocr_turned_off_selects_no_engine_and_images_say_why() -> None:
    off = OcrOptions(engine="off")

    assert isinstance(select_engine(off), NoEngine)
    with pytest.raises(Exception, match="Images are read by OCR, but text recognition"):
        extract_document(samples.png_image(), "photo.png", None, limits=ExtractionLimits(ocr=off))


def test_an_image_canvas_beyond_the_pixel_cap_is_refused_before_decoding() -> None:
    from extract import DocumentTooLargeError

    with pytest.raises(DocumentTooLargeError, match="megapixels"):
        extract_document(samples.png_header_only(20_000, 20_000), "huge.png", None)


def test_a_damaged_image_is_corrupt() -> None:
    from extract import CorruptDocumentError

    data = samples.png_image()[:60]

    with pytest.raises(CorruptDocumentError):
        extract_document(data, "broken.png", None)


def test_auto_prefers_the_bundled_engine_and_names_a_missing_one() -> None:
    from extract.ocr import rapidocr_available, tesseract_binary

    auto = select_engine(OcrOptions())
    tesseract = select_engine(OcrOptions(engine="tesseract"))

    if rapidocr_available():
        assert not isinstance(auto, NoEngine) and auto.name == "rapidocr"
    if tesseract_binary() is None:
        assert isinstance(tesseract, NoEngine)
        assert "Tesseract is not installed" in tesseract.reason
    else:
        assert not isinstance(tesseract, NoEngine) and tesseract.name == "tesseract"


@pytest.mark.skipif(
    __import__("shutil").which("tesseract") is None, reason="tesseract is not installed"
)
def test_auto_takes_tesseract_for_a_language_the_bundled_model_cannot_read() -> None:
    engine = select_engine(OcrOptions(languages=("ru",)))

    assert not isinstance(engine, NoEngine) and engine.name == "tesseract"


class _Broken:
    name = "broken"

    def recognise(self, image: PageImage) -> list[TextBox]:
        raise RuntimeError("engine crashed")


def test_a_scan_whose_recognition_failed_says_so_rather_than_nothing_legible() -> None:
    from extract import ScannedPdfError

    data = samples.pdf_pages("tdt")
    scan_only = _only_page(data, 1)

    with pytest.raises(ScannedPdfError, match=r"OCR\) failed on them \(engine crashed\)"):
        extract_pdf(scan_only, ExtractionLimits(), ocr=_Broken())


def _only_page(data: bytes, index: int) -> bytes:
    import pymupdf

    source = pymupdf.open(stream=data, filetype="pdf")
    single = pymupdf.open()
    single.insert_pdf(source, from_page=index, to_page=index)
    out = bytes(single.tobytes())
    single.close()
    source.close()
    return out


def test_parts_read_side_by_side_report_their_wall_clock_budget_not_its_sum() -> None:
    """#24: four parts of one PDF, each recognising its own pages within a 90 s budget, ran
    side by side: the document's OCR time budget was 90 s of wall-clock time, not 360 s."""
    parts = [
        OcrResult(
            engine="rapidocr", texts={i * 10: "text"}, over_time_budget=[i * 10 + 1], seconds=s
        )
        for i, s in enumerate([90.0, 89.5, 90.0, 88.0])
    ]
    combined = OcrResult.combined(parts)
    assert combined.seconds == 90.0
    (note,) = [w for w in combined.warnings() if "time budget" in w]
    assert "time budget of 90 s was used up" in note
    assert combined.over_time_budget == [1, 11, 21, 31]
