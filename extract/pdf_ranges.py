"""Splitting a long PDF into page ranges read by parallel sandbox children, and joining them.

The plan (see :class:`extract.sandbox.SandboxPool`): one child opens the PDF,
checks it as a whole (:func:`extract.pdf.survey_pdf`: pages, readability, pages to
recognise; cheap, no layout) and answers its page count and those pages, or reads
it whole when it is short; the pages are then cut into consecutive ranges of
``pages_per_part``, each read by a child as a :class:`extract.pdf.PdfPart` with
recognition where needed and layout analysis,
``workers`` at a time; :func:`extract.pdf.join_pdf_parts` joins the parts with
the document's page markers and offsets, and its warnings name every page that
fell back to plain text. Parts travel between processes as JSON (:mod:`extract.wire`).
"""

from __future__ import annotations

import dataclasses
import os

from extract.types import ExtractionLimits, Kind

IN_PROCESS_KINDS: frozenset[Kind] = frozenset({"markdown", "text", "csv", "html"})
"""Kinds whose readers are pure Python and bounded by the file size: small files of
these kinds are read in the worker's own process, without a child."""

PAGES_PER_PART = 16
"""Pages of a long PDF one child reads in one request, by default."""
SPLIT_MIN_PAGES = 32
"""PDFs with at least this many pages are read in parts, by default."""

PART_LAYOUT_SHARE = 0.8
"""Share of a part's timeout its layout analysis may use (the rest is the plain pass)."""


def default_workers() -> int:
    """Children reading one PDF's parts at once when not set: one per two CPU cores.

    The layout model's ONNX Runtime sessions already run each inference on a thread per
    core, so one child keeps about two cores busy; on 2 cores the 400-page IRS manual took
    71 s wall and 131 CPU-s with one child against 81 s and 159 CPU-s with two, which only
    competed for the same cores (docs/benchmarks.md).
    """
    return max(1, (os.cpu_count() or 1) // 2)


def part_ranges(page_count: int, pages_per_part: int) -> list[range]:
    """Consecutive 0-based page ranges of at most ``pages_per_part`` pages covering the PDF."""
    step = max(1, pages_per_part)
    return [range(start, min(start + step, page_count)) for start in range(0, page_count, step)]


def part_limits(limits: ExtractionLimits, timeout: float) -> ExtractionLimits:
    """The limits one part runs under: ``timeout``, most of it for layout analysis."""
    budget = limits.layout_budget_seconds
    return dataclasses.replace(
        limits,
        timeout_seconds=timeout,
        layout_budget_seconds=PART_LAYOUT_SHARE * timeout if budget is None else budget,
    )
