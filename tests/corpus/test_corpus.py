"""Every PDF of the shared corpus gives the outcome its manifest allows.

The files a run selects go through :func:`extract_in_sandbox`, two at a time, once per
session: ``scripts/test`` sends a file's tests to one worker (``--dist loadfile``), so one
worker extracts the corpus while the other runs the rest of the suite. CI's run
(``-m "not slow"``) extracts :data:`IN_CI`, a few of each kind; ``scripts/test -m slow``
extracts the rest. The layout budget is kept short (``LAYOUT_BUDGET_SECONDS``) so the
long documents finish quickly: later pages then come from the plain-text path,
and the checks below still require page count, markers and text on every page
that has a text layer. OCR is on, as by default, but recognises at most
``OCR_PAGES`` pages per document (CPU time: a page costs seconds); the
image-only scans must still come out as text.
"""

from __future__ import annotations

import json
import os
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pymupdf
import pytest

from extract import (
    CorruptDocumentError,
    EmptyDocumentError,
    EncryptedDocumentError,
    Extraction,
    ExtractionError,
    ExtractionLimits,
    OcrOptions,
    ScannedPdfError,
    extract_in_sandbox,
)
from extract.ocr import UNUSABLE, TextLayer, describe_pdf_page, ocr_reason
from extract.pdf import MIN_TEXT_CHARS, extract_pdf_part
from tests.support.paths import CORPUS_DIR

LAYOUT_BUDGET_SECONDS = 1.5
OCR_PAGES = 1
LIMITS = ExtractionLimits(
    layout_budget_seconds=LAYOUT_BUDGET_SECONDS,
    timeout_seconds=90,
    ocr=OcrOptions(max_pages=OCR_PAGES),
)
ERROR_FOR_EXPECTATION: dict[str, type[ExtractionError]] = {
    "scanned": ScannedPdfError,
    "encrypted": EncryptedDocumentError,
    "corrupt": CorruptDocumentError,
    "empty": EmptyDocumentError,
}

Outcome = Extraction | ExtractionError


def _manifest() -> list[dict[str, Any]]:
    manifest = CORPUS_DIR / "manifest.json"
    if not manifest.exists():
        return []
    entries: list[dict[str, Any]] = json.loads(manifest.read_text())
    return [entry for entry in entries if entry["expect"] is not None]  # linn.txt: ground truth


ENTRIES = _manifest()
BY_PATH = {entry["path"]: entry for entry in ENTRIES}
IN_CI = frozenset(
    {
        "papers/naacl06-shinyama.pdf",
        "papers/TAMReview.pdf",
        "papers_acl/P19-1598.pdf",
        "tables/github_sample.pdf",
        "scanned_image_only/c02-22.pdf",
        "scanned_image_only/175.pdf",
        "scanned_ocr_layer/Seige_of_Vicksburg_Sample_OCR.pdf",
        "scanned_ocr_layer/issue12963.pdf",
        "encrypted/aes-256.pdf",
        "encrypted/r4-owner-password.pdf",
        "corrupted/empty.pdf",
        "corrupted/zen_of_python_corrupted.pdf",
        "corrupted/bug1020226.pdf",
        "corrupted/Pages-tree-refs.pdf",
        "corrupted/poppler-85140-0.pdf",
        "corrupted/scan-bad.pdf",
        "non_latin/russian.pdf",
        "non_latin/chinese-tables.pdf",
        "non_latin/korean-text-with-tables.pdf",
        "non_latin/right_to_left_01.pdf",
        "long_100plus/test-3820.pdf",
        "forms/f1040nr.pdf",
        "misc_edge/issue-449-vertical.pdf",
        "misc_edge/rotated-page-90.pdf",
    }
)
"""The PDFs CI extracts: of each category the cheapest with each outcome its manifest
names, a second image-only scan, the garbled layers the tests below read, and a few scripts.
The whole corpus costs about four CPU-minutes on 2 cores, most of it in five image-only scans
and three long documents, which no CI run should pay for each time; ``-m slow`` reads them."""


def over_corpus(paths: list[str]) -> pytest.MarkDecorator:
    """Parametrize a test by ``path`` over those of ``paths`` the manifest has (none, and it
    is skipped), each not :data:`IN_CI` marked slow."""
    return pytest.mark.parametrize(
        "path",
        [
            pytest.param(path, id=path, marks=[] if path in IN_CI else [pytest.mark.slow])
            for path in paths
            if path in BY_PATH
        ],
    )


@pytest.fixture(scope="module")
def outcomes(request: pytest.FixtureRequest) -> dict[str, Outcome]:
    """The outcome of each PDF the run's selected tests of this module read."""
    selected = {
        item.callspec.params["path"]
        for item in request.session.items
        if item.module is request.module and hasattr(item, "callspec")
        if "path" in item.callspec.params
    }
    wanted = [entry for entry in ENTRIES if entry["path"] in selected]

    def run(entry: dict[str, Any]) -> tuple[str, Outcome]:
        path = CORPUS_DIR / entry["path"]
        try:
            return entry["path"], extract_in_sandbox(
                path.read_bytes(), path.name, None, limits=LIMITS
            )
        except ExtractionError as error:
            return entry["path"], error

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = dict(pool.map(run, wanted))
    elapsed = time.monotonic() - started
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if capture is not None:
        with capture.global_and_fixture_disabled():
            print(f"\ncorpus: {len(wanted)} PDFs extracted in {elapsed:.1f} s wall time")
    return results


def _plain_letters_per_page(path: Path) -> list[int | None]:
    """Letters and digits PyMuPDF finds on each page (None where it cannot read the page, or
    where its text layer is not text: such a page is left empty unless OCR reads it)."""
    counts: list[int | None] = []
    with cast(Any, pymupdf).open(path) as document:
        for index in range(document.page_count):
            try:
                page = document[index]
                layer = describe_pdf_page(page, page.get_text("blocks"))
            except Exception:
                counts.append(None)
                continue
            unusable = ocr_reason(layer) in UNUSABLE
            counts.append(None if unusable else sum(ch.isalnum() for ch in page.get_text()))
    return counts


def _extracted(outcomes: dict[str, Outcome], path: str) -> Extraction:
    """The extraction of ``path``; the test fails with the refusal's code and message if the
    file was refused instead."""
    outcome = outcomes[path]
    assert isinstance(outcome, Extraction), f"{path}: {outcome.code}: {outcome.message}"
    return outcome


def _page_bodies(extraction: Extraction) -> list[str]:
    ends = [*extraction.page_offsets[1:], len(extraction.markdown)]
    return [
        extraction.markdown[start:end].split("\n", 1)[1]
        for start, end in zip(extraction.page_offsets, ends, strict=True)
    ]


def _assert_text_outcome(entry: dict[str, Any], extraction: Extraction) -> None:
    assert extraction.kind == "pdf"
    assert extraction.page_count == entry["pages"]
    for number, offset in enumerate(extraction.page_offsets, start=1):
        assert extraction.markdown.startswith(f"<!-- page {number} -->\n", offset)
    assert extraction.markdown.count("<!-- page ") == entry["pages"]
    letters = _plain_letters_per_page(CORPUS_DIR / entry["path"])
    for number, (body, count) in enumerate(zip(_page_bodies(extraction), letters, strict=True), 1):
        if count is not None and count >= MIN_TEXT_CHARS:
            assert body.strip(), f"page {number} has a text layer but came out empty"


@pytest.mark.timeout(900)  # the first test also runs the shared fixture (the whole corpus: 2-4 min)
@over_corpus(list(BY_PATH))
def test_corpus_pdf_gives_an_outcome_its_manifest_allows(
    path: str, outcomes: dict[str, Outcome]
) -> None:
    entry = BY_PATH[path]
    outcome = outcomes[path]
    expect: list[str] = entry["expect"]
    if isinstance(outcome, Extraction):
        assert "text" in expect, f"extracted text, but manifest expects {expect}"
        _assert_text_outcome(entry, outcome)
    else:
        allowed = tuple(ERROR_FOR_EXPECTATION[e] for e in expect if e in ERROR_FOR_EXPECTATION)
        assert isinstance(outcome, allowed), f"{outcome.code}: {outcome.message}; expected {expect}"
        assert outcome.message


@pytest.mark.skipif(not ENTRIES, reason=f"no corpus manifest under {CORPUS_DIR}")
def test_pdf_that_breaks_pymupdf4llm_falls_back_to_plain_text_per_page() -> None:
    # issue12963.pdf's form fields make pymupdf4llm fail ("Cycle in field parents"). Its own
    # layer is not words, so it is never laid out now; English printed over its first page
    # makes that page's layer good, and the layout model is asked again.
    document: Any = pymupdf.open(CORPUS_DIR / "scanned_ocr_layer/issue12963.pdf")
    for line in range(45):
        document[0].insert_text((40, 60 + line * 16), "The committee reviewed the proposal.")
    limits = ExtractionLimits(ocr=OcrOptions(engine="off"), layout_every_page=True)

    part = extract_pdf_part(bytes(document.tobytes()), limits, range(0, 1))

    assert part.failed == (0,) and "Cycle in field parents" in part.layout_failure
    assert part.bodies[0].count("The committee reviewed the proposal.") == 45


@pytest.mark.skipif(not ENTRIES, reason=f"no corpus manifest under {CORPUS_DIR}")
def test_a_scan_whose_text_layer_is_not_words_is_refused_when_ocr_is_off() -> None:
    # issue12963.pdf's layer is Latin look-alikes of Russian: with OCR off it used to be laid
    # out (and broke pymupdf4llm: "Cycle in field parents") and indexed as that garbage; it
    # is now left out, and with all eight pages so, the document is a scan.
    path = CORPUS_DIR / "scanned_ocr_layer/issue12963.pdf"
    limits = ExtractionLimits(ocr=OcrOptions(engine="off"))

    with pytest.raises(ScannedPdfError, match=r"8 of 8 pages have no text layer \(or one that"):
        extract_in_sandbox(path.read_bytes(), path.name, None, limits=limits)


LONG = [e["path"] for e in ENTRIES if e["path"].startswith("long_100plus/")]


@over_corpus(LONG)
def test_long_pdfs_switch_to_plain_text_once_the_layout_budget_is_spent(
    path: str, outcomes: dict[str, Outcome]
) -> None:
    outcome = _extracted(outcomes, path)
    assert any("budget" in warning for warning in outcome.warnings), path


IMAGE_ONLY = [e["path"] for e in ENTRIES if e["category"] == "scanned_image_only"]


@over_corpus(IMAGE_ONLY)
def test_image_only_scans_come_out_as_recognised_text(
    path: str, outcomes: dict[str, Outcome]
) -> None:
    outcome = _extracted(outcomes, path)
    assert outcome.ocr_pages[:1] == (1,)
    first = _page_bodies(outcome)[0]
    assert sum(char.isalpha() for char in first) >= 40, first


@over_corpus(["papers/TAMReview.pdf"])
def test_tamreview_garbled_text_layer_is_replaced_by_readable_text(
    path: str, outcomes: dict[str, Outcome]
) -> None:
    outcome = _extracted(outcomes, path)
    assert outcome.ocr_pages == (2,)  # page 1 is good; page 2 is the first garbled one
    second = _page_bodies(outcome)[1]
    assert TextLayer(second, 0, 0).unmapped_share < 0.01
    assert "technology acceptance model" in " ".join(second.lower().split())
    # Past the OCR page budget, the garbled pages are left empty, not indexed as garbage.
    assert [body.strip() for body in _page_bodies(outcome)[2:22]] == [""] * 20
    assert any("Page 3-22 not recognised" in warning for warning in outcome.warnings)


PAPERS = [
    e["path"]
    for e in ENTRIES
    if e["category"] in ("papers", "papers_acl") and e["path"] != "papers/TAMReview.pdf"
]


@over_corpus(PAPERS)
def test_papers_with_a_good_text_layer_are_not_recognised(
    path: str, outcomes: dict[str, Outcome]
) -> None:
    assert _extracted(outcomes, path).ocr_pages == (), path
