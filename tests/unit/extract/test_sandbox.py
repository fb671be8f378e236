from __future__ import annotations

import asyncio
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from extract import (
    CorruptDocumentError,
    DocumentTooLargeError,
    ExtractionLimits,
    ExtractionTimeout,
    OcrOptions,
    ScannedPdfError,
    UnsupportedFormatError,
    extract_document,
    extract_in_sandbox,
)
from extract.sandbox import death_error
from tests.unit.extract import samples


def _large_csv(rows: int) -> bytes:
    return b"\n".join(b"%d,alpha beta gamma,%d" % (i, i * 7) for i in range(rows))


def test_sandbox_returns_the_same_extraction_as_in_process() -> None:
    data = samples.xlsx_workbook()

    assert extract_in_sandbox(data, "w.xlsx", None) == extract_document(data, "w.xlsx", None)


def test_sandbox_reraises_the_childs_typed_error_with_details() -> None:
    with pytest.raises(ScannedPdfError) as raised:
        extract_in_sandbox(samples.pdf_pages("ss"), "scan.pdf", None)

    assert (raised.value.pages_without_text, raised.value.page_count) == (2, 2)


def test_sandbox_child_gets_the_ocr_options() -> None:
    limits = ExtractionLimits(ocr=OcrOptions(engine="off", languages=("de", "en")))

    with pytest.raises(ScannedPdfError, match="turned off"):
        extract_in_sandbox(samples.pdf_pages("s"), "scan.pdf", None, limits=limits)


def test_sandbox_timeout_kills_the_child_and_raises_extraction_timeout() -> None:
    started = time.monotonic()

    with pytest.raises(ExtractionTimeout, match=r"longer than 0\.05 s"):
        extract_in_sandbox(
            samples.pdf_report(), "r.pdf", None, limits=ExtractionLimits(timeout_seconds=0.05)
        )

    assert time.monotonic() - started < 10


def test_sandbox_child_over_its_memory_cap_gives_document_too_large() -> None:
    data = _large_csv(600_000)  # 18 MB of CSV needs far more than 200 MB as Python rows

    with pytest.raises(DocumentTooLargeError, match="memory"):
        extract_in_sandbox(data, "big.csv", None, limits=ExtractionLimits(memory_mb=200))

    assert extract_in_sandbox(b"a,b\n1,2\n", "small.csv", None).page_count == 1  # parent still fine


def test_sandbox_refuses_oversized_input_without_starting_a_child() -> None:
    with pytest.raises(DocumentTooLargeError):
        extract_in_sandbox(b"x" * 100, "a.txt", None, limits=ExtractionLimits(max_bytes=10))


def test_sandbox_works_from_worker_threads_in_parallel() -> None:
    files = [(samples.docx_report(), "a.docx"), (b"<p>hello</p>", "b.html"), (b"\x7fELF", "c.pdf")]

    def run(item: tuple[bytes, str]) -> str:
        try:
            return extract_in_sandbox(item[0], item[1], None).kind
        except UnsupportedFormatError as error:
            return error.code

    with ThreadPoolExecutor(max_workers=3) as pool:
        assert list(pool.map(run, files)) == ["docx", "html", "unsupported_format"]


def test_sandbox_works_from_an_asyncio_program_via_to_thread() -> None:
    async def main() -> str:
        extraction = await asyncio.to_thread(
            extract_in_sandbox, b"# Hi\n", "hi.md", "text/markdown"
        )
        return extraction.markdown

    assert asyncio.run(main()) == "<!-- page 1 -->\n\n# Hi\n\n"


def test_child_killed_by_a_signal_is_reported_as_corrupt() -> None:
    with pytest.raises(CorruptDocumentError, match="signal 11"):
        raise death_error(b"Fatal Python error: Segmentation fault\n", -11, ExtractionLimits())


def test_child_dying_of_memory_exhaustion_is_reported_as_too_large() -> None:
    with pytest.raises(DocumentTooLargeError, match="2048 MB"):
        raise death_error(b"Traceback...\nMemoryError\n", 1, ExtractionLimits())
