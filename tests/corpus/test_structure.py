"""Reading PDFs in parallel parts keeps the structure pymupdf4llm's layout mode found.

``structure_counts.json`` holds, per PDF of ``tables/`` and ``papers/``, the number
of Markdown tables and headings of the layout output before PDFs were read in
parts (recorded with ``python -m tests.support.structure --write``). Each PDF
goes through :class:`extract.SandboxPool` with small parts, so most of them are
split and joined. Documents of more than ``CI_MAX_PAGES`` pages are marked slow.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from extract import ExtractionLimits, SandboxPool
from tests.support.paths import CORPUS_DIR
from tests.support.structure import COUNTS_FILE, structure_counts

CI_MAX_PAGES = 8
LIMITS = ExtractionLimits(timeout_seconds=600)  # a loaded machine must not lose layout pages
RECORDED: dict[str, dict[str, int]] = (
    json.loads(COUNTS_FILE.read_text()) if (CORPUS_DIR / "tables").is_dir() else {}
)


@pytest.fixture(scope="module")
def pool() -> Iterator[SandboxPool]:
    with SandboxPool(spares=0, workers=2, pages_per_part=3, split_min_pages=4) as sandboxes:
        yield sandboxes


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(path, marks=[pytest.mark.slow] if counts["pages"] > CI_MAX_PAGES else [])
        for path, counts in sorted(RECORDED.items())
    ],
)
def test_tables_and_headings_per_document_stay_as_recorded(pool: SandboxPool, path: str) -> None:
    data = (CORPUS_DIR / path).read_bytes()

    extraction = pool.extract(data, path.rsplit("/", 1)[-1], None, limits=LIMITS)

    assert not [warning for warning in extraction.warnings if "budget" in warning]
    assert {"pages": extraction.page_count, **structure_counts(extraction.markdown)} == (
        RECORDED[path]
    )
