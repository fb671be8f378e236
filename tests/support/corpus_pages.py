"""Pages of the shared corpus extracted once per test process, for the fidelity checks.

Extracting a page costs about a CPU-second (the layout model), so every test that
needs a corpus page asks :func:`page_markdown` (or :func:`extracted`), which reads
each requested page range once per session, in this process, as uploads do.
"""

from __future__ import annotations

from functools import cache
from typing import Any, cast

from bench.fidelity import page_text_layer
from extract import ExtractionLimits, OcrOptions
from extract.pdf import PdfPart, extract_pdf_part
from tests.support.paths import CORPUS_DIR

LIMITS = ExtractionLimits(timeout_seconds=600, ocr=OcrOptions(max_pages=2))
"""A loaded machine must not lose layout pages to the budget; OCR for two pages at most."""


@cache
def extracted(path: str, first: int, last: int) -> PdfPart:
    """Pages ``first`` to ``last`` (1-based) of a corpus PDF, read by :func:`extract_pdf_part`."""
    data = (CORPUS_DIR / path).read_bytes()
    return extract_pdf_part(data, LIMITS, range(first - 1, last))


def page_markdown(path: str, first: int, last: int) -> str:
    """Those pages as page-marked Markdown, numbered as in the document."""
    part = extracted(path, first, last)
    return "".join(
        f"<!-- page {number} -->\n\n{body.strip()}\n\n"
        for number, body in enumerate(part.bodies, start=first)
    )


def page_body(path: str, number: int, first: int | None = None, last: int | None = None) -> str:
    """One page's Markdown, from the range ``first``-``last`` that holds it (the page alone
    by default)."""
    part = extracted(path, first or number, last or number)
    return part.bodies[number - (first or number)]


@cache
def text_layer(path: str, number: int) -> str:
    """Page ``number``'s (1-based) text layer: the fidelity reference."""
    import pymupdf

    with cast(Any, pymupdf).open(CORPUS_DIR / path) as document:
        return page_text_layer(document[number - 1])
