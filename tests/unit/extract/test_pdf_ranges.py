"""Long PDFs read as parallel page ranges, and small text files read without a child."""

from __future__ import annotations

import json
import os
import threading

import pytest

from extract import ExtractionLimits, SandboxPool, ScannedPdfError, extract_document
from extract.pdf import (
    PdfPart,
    PdfSurvey,
    extract_pdf,
    extract_pdf_part,
    join_pdf_parts,
    survey_pdf,
)
from extract.pdf_ranges import part_limits, part_ranges
from extract.types import OcrOptions
from extract.wire import from_wire, to_wire
from tests.support.procfs import child_pids
from tests.unit.extract import samples
from tests.unit.extract.test_ocr import _Clock, _StandIn

LIMITS = ExtractionLimits()


def test_page_ranges_cover_the_document_in_order() -> None:
    assert part_ranges(5, 2) == [range(0, 2), range(2, 4), range(4, 5)]
    assert part_ranges(3, 16) == [range(0, 3)]


def test_a_part_runs_for_its_timeout_with_most_of_it_for_layout() -> None:
    limits = part_limits(ExtractionLimits(timeout_seconds=120), 50.0)

    assert (limits.timeout_seconds, limits.layout_budget()) == (50.0, 40.0)


def test_a_pdf_read_in_parts_equals_the_one_read_whole_and_reports_each_page() -> None:
    data = samples.pdf_pages("ttstt")
    seen: list[tuple[int, int]] = []
    lock = threading.Lock()

    def progress(done: int, total: int) -> None:
        with lock:
            seen.append((done, total))

    with SandboxPool(spares=0, workers=2, pages_per_part=2, split_min_pages=3) as pool:
        extraction = pool.extract(data, "long.pdf", None, progress=progress)

    assert extraction == extract_document(data, "long.pdf", None)
    assert extraction.markdown[extraction.page_offsets[4] :].startswith("<!-- page 5 -->\n")
    assert [done for done, _ in sorted(seen)] == [1, 2, 3, 4, 5]
    assert {total for _, total in seen} == {5}


def test_a_pdf_too_short_to_split_reports_its_pages_too() -> None:
    seen: list[tuple[int, int]] = []

    with SandboxPool(spares=0, split_min_pages=10) as pool:
        extraction = pool.extract(
            samples.pdf_pages("ttt"), "short.pdf", None, progress=lambda *p: seen.append(p)
        )

    assert extraction.page_count == 3
    assert seen == [(1, 3), (2, 3), (3, 3)]


def test_parts_travel_as_json_and_join_with_the_documents_warnings() -> None:
    data = samples.pdf_pages("tttt")
    parts = [_over_json(extract_pdf_part(data, LIMITS, pages)) for pages in part_ranges(4, 3)]

    joined = join_pdf_parts(parts[::-1], LIMITS, ["named .docx, but it is a pdf"])

    whole = extract_document(data, "x.pdf", None)
    assert (joined.markdown, joined.page_offsets) == (whole.markdown, whole.page_offsets)
    assert joined.warnings == ("named .docx, but it is a pdf",)


def test_a_survey_counts_the_pages_recognition_would_read() -> None:
    assert survey_pdf(samples.pdf_pages("tst"), LIMITS) == PdfSurvey(3, ocr_pages=(1,))
    assert survey_pdf(samples.pdf_pages("ttt"), LIMITS) == PdfSurvey(3, ocr_pages=())


def test_scans_in_parts_are_judged_for_the_whole_document_when_joined() -> None:
    data = samples.pdf_pages("ssst")
    parts = [_over_json(extract_pdf_part(data, LIMITS, pages)) for pages in part_ranges(4, 2)]
    with pytest.raises(ScannedPdfError) as whole:
        extract_document(data, "scan.pdf", None)

    with pytest.raises(ScannedPdfError) as joined:
        join_pdf_parts(parts, LIMITS)

    assert joined.value.message == whole.value.message
    assert "3 of 4 pages have no text layer" in joined.value.message


def test_a_long_pdf_with_a_scanned_page_read_in_parts_equals_the_one_read_whole() -> None:
    data = samples.pdf_pages("ttstt")
    with SandboxPool(spares=0, workers=2, pages_per_part=2, split_min_pages=3) as pool:
        extraction = pool.extract(data, "long.pdf", None)

    assert extraction == extract_document(data, "long.pdf", None)
    assert any("page 3" in warning for warning in extraction.warnings)


def test_parts_recognise_their_own_pages_within_the_documents_ocr_budget() -> None:
    clock = _Clock()
    data = samples.pdf_pages("tdtdtd")
    limits = ExtractionLimits(ocr=OcrOptions(max_pages=2))
    left_out = survey_pdf(data, limits).ocr_left_out(limits)
    whole_engine, parts_engine = _StandIn(clock, 0.0), _StandIn(clock, 0.0)

    whole = extract_pdf(data, limits, ocr=whole_engine, clock=clock)
    parts = [
        _over_json(
            extract_pdf_part(
                data, limits, pages, ocr=parts_engine, clock=clock, ocr_left_out=left_out
            )
        )
        for pages in part_ranges(6, 2)
    ]
    joined = join_pdf_parts(parts, limits)

    assert left_out == (5,)
    assert parts_engine.pages == whole_engine.pages == 2
    assert joined.ocr_pages == whole.ocr_pages == (2, 4)
    assert joined.warnings == whole.warnings
    assert any("Page 6 not recognised: the OCR budget of 2 pages" in w for w in joined.warnings)


def test_a_part_whose_layout_attempt_failed_is_plain_text_and_says_which_pages() -> None:
    data = samples.pdf_report()
    part = extract_pdf_part(data, LIMITS, range(1, 2), layout_failure="the child died")
    first = extract_pdf_part(data, LIMITS, range(0, 1))

    extraction = join_pdf_parts([first, part], LIMITS)

    assert "# Quarterly Report" in extraction.markdown  # page 1 kept its layout
    assert "second page explains" in extraction.markdown[extraction.page_offsets[1] :]
    assert extraction.warnings == (
        "Layout analysis failed (the child died); page 2 extracted as plain text",
    )


def test_pages_beyond_the_layout_page_budget_are_plain_text_with_a_warning() -> None:
    limits = ExtractionLimits(layout_max_pages=1, layout_every_page=True)

    extraction = extract_document(samples.pdf_report(), "r.pdf", None, limits=limits)

    assert "# Quarterly Report" in extraction.markdown
    assert extraction.warnings == (
        "Layout analysis covers the first 1 pages; page 2 extracted as plain text "
        "(no tables or headings)",
    )


def test_small_text_files_are_read_without_a_child_and_larger_ones_in_one() -> None:
    with SandboxPool(spares=0, in_process_max_bytes=64) as pool:
        before = child_pids(os.getpid())
        small = pool.extract(b"# Hi\n\nsmall note\n", "note.md", None)
        assert child_pids(os.getpid()) == before

        big = pool.extract(b"a,b\n" + b"1,2\n" * 100, "big.csv", None)

    assert (small.kind, big.kind) == ("markdown", "csv")
    assert small == extract_document(b"# Hi\n\nsmall note\n", "note.md", None)


def test_a_pdf_named_as_text_still_goes_to_a_child() -> None:
    data = samples.pdf_report()
    with SandboxPool(spares=0) as pool:
        extraction = pool.extract(data, "notes.txt", None)

    assert extraction.kind == "pdf"


def _over_json(part: PdfPart) -> PdfPart:
    """``part`` as the parent gets it from a child: sent as JSON and checked."""
    return from_wire(json.loads(json.dumps(to_wire(part))), PdfPart, "part")


def test_progress_counts_recognised_pages_as_they_are_read_then_the_rest() -> None:
    clock = _Clock()
    engine = _StandIn(clock, 0.0)
    seen: list[tuple[int, int]] = []  # (pages done, pages the engine had read by then)

    extract_pdf(
        samples.pdf_pages("tddt"),
        LIMITS,
        ocr=engine,
        clock=clock,
        progress=lambda done, total: seen.append((done, engine.pages)),
    )

    assert seen == [(1, 1), (2, 2), (3, 2), (4, 2)]  # each scan counted as soon as it is read
