"""Pooled children: started ahead of time, reused up to a cap, PDFs read in parallel parts."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from extract import (
    ExtractionLimits,
    ExtractionTimeout,
    SandboxPool,
    ScannedPdfError,
    extract_document,
)
from tests.support.procfs import is_running
from tests.unit.extract import samples


@pytest.fixture
def pool() -> Iterator[SandboxPool]:
    sandboxes = SandboxPool(spares=1)
    try:
        yield sandboxes
    finally:
        sandboxes.close()


def wait_until(condition: object, within: float = 30.0) -> None:
    deadline = time.monotonic() + within
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, "the condition did not come true in time"
        time.sleep(0.05)


def test_a_pooled_extraction_equals_the_in_process_one(pool: SandboxPool) -> None:
    data = samples.pdf_report()

    assert pool.extract(data, "r.pdf", None) == extract_document(data, "r.pdf", None)


def test_a_child_serves_pdfs_up_to_its_cap_then_is_replaced() -> None:
    with SandboxPool(spares=1, workers=1, documents_per_child=2) as sandboxes:
        sandboxes.warm()
        [child] = sandboxes.spare_pids()

        sandboxes.extract(samples.pdf_report(), "a.pdf", None)
        assert sandboxes.spare_pids() == [child], "one document in, the child is back"
        sandboxes.extract(samples.pdf_report(), "upload", "application/pdf")

        wait_until(lambda: not is_running(child))
        [replacement] = sandboxes.spare_pids()
        assert replacement != child


def test_a_child_that_answered_an_error_is_not_reused(pool: SandboxPool) -> None:
    pool.warm()
    [child] = pool.spare_pids()

    with pytest.raises(ScannedPdfError):
        pool.extract(samples.pdf_pages("ss"), "scan.pdf", None)

    wait_until(lambda: not is_running(child))
    assert child not in pool.spare_pids()


def test_office_files_get_a_fresh_child_and_small_text_none(pool: SandboxPool) -> None:
    pool.warm()
    [spare] = pool.spare_pids()

    kinds = [
        pool.extract(samples.docx_report(), "a.docx", None).kind,
        pool.extract(b"# Hi\n", "hi.md", "text/markdown").kind,
    ]

    assert kinds == ["docx", "markdown"]
    assert pool.spare_pids() == [spare]


def test_typed_errors_and_timeouts_come_through_a_spare(pool: SandboxPool) -> None:
    pool.warm()
    with pytest.raises(ScannedPdfError):
        pool.extract(samples.pdf_pages("ss"), "scan.pdf", None)

    pool.warm()
    with pytest.raises(ExtractionTimeout):
        pool.extract(
            samples.pdf_report(), "r.pdf", None, limits=ExtractionLimits(timeout_seconds=0.05)
        )


def test_a_spare_waits_under_its_memory_cap_already() -> None:
    sandboxes = SandboxPool(spares=1, memory_mb=1500)
    try:
        sandboxes.warm()
        [spare] = sandboxes.spare_pids()

        def address_space_limits() -> list[str]:
            limits = Path(f"/proc/{spare}/limits").read_text(encoding="ascii")
            [line] = [line for line in limits.splitlines() if "address space" in line]
            return line.split()[3:5]  # soft, hard

        # The cap comes as the child starts, before the PDF libraries load.
        wait_until(lambda: address_space_limits() != ["unlimited", "unlimited"])
        assert address_space_limits() == [str(1500 * 1024 * 1024)] * 2
    finally:
        sandboxes.close()


def test_a_pdf_asking_for_another_memory_cap_gets_a_fresh_child(pool: SandboxPool) -> None:
    pool.warm()
    [spare] = pool.spare_pids()

    extraction = pool.extract(
        samples.pdf_report(), "r.pdf", None, limits=ExtractionLimits(memory_mb=3000)
    )

    assert extraction.kind == "pdf"
    assert pool.spare_pids() == [spare], "the spare, capped differently, still waits"


def test_a_spare_that_died_is_passed_over(pool: SandboxPool) -> None:
    pool.warm()
    [spare] = pool.spare_pids()
    os.kill(spare, 9)
    wait_until(lambda: not is_running(spare))

    assert pool.extract(samples.pdf_report(), "r.pdf", None).kind == "pdf"


def test_spares_stop_when_the_pool_closes(pool: SandboxPool) -> None:
    pool.warm()
    [spare] = pool.spare_pids()

    pool.close()

    assert not is_running(spare)
    assert pool.spare_pids() == []
    assert pool.extract(samples.pdf_report(), "r.pdf", None).kind == "pdf"
    assert pool.spare_pids() == [], "a closed pool starts no more spares"


def test_a_spare_whose_stdin_closes_exits_quietly() -> None:
    from extract.sandbox import _Child

    child = _Child(warm_memory_mb=2048)
    assert child.process.stdin is not None
    child.process.stdin.close()  # what the parent's death does to it

    returncode = child.process.wait(timeout=60)
    child.kill()
    assert returncode == 0, b"".join(child._stderr)


def test_the_pool_serves_threads_in_parallel() -> None:
    sandboxes = SandboxPool(spares=2)
    files = [(samples.pdf_report(), "a.pdf"), (samples.pdf_report(), "b.pdf"), (b"# t\n", "c.md")]
    try:
        sandboxes.warm()
        with ThreadPoolExecutor(max_workers=3) as threads:
            kinds = list(threads.map(lambda item: sandboxes.extract(*item, None).kind, files))
    finally:
        sandboxes.close()

    assert kinds == ["pdf", "pdf", "markdown"]
