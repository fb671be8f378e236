"""What recognition made of a document's pages, and the warnings it gives."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from extract.markdown import page_ranges
from extract.types import OcrLine


@dataclass
class OcrResult:
    """What recognition made of the pages it was asked to read (0-based page indexes)."""

    engine: str | None = None
    unavailable: str | None = None
    """Why no engine read anything (OCR off, or no engine installed)."""
    texts: dict[int, str] = field(default_factory=dict)
    lines: dict[int, list[tuple[float, float, float, float, str]]] = field(default_factory=dict)
    """Per page read, its recognised lines: (x0, y0, x1, y1) as shares of the page image's
    width and height, and the text."""
    illegible: list[int] = field(default_factory=list)
    over_page_budget: list[int] = field(default_factory=list)
    over_time_budget: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)
    first_failure: str = ""
    max_pages: int = 0
    seconds: float = 0.0
    """The wall-clock time recognition was given (its time budget), in seconds."""

    @classmethod
    def combined(cls, results: Sequence[OcrResult]) -> OcrResult:
        """One result for a document whose parts each recognised their own pages.

        The parts run side by side, each within its own time budget, so the document's budget
        in wall-clock time is the longest of theirs, not their sum (which said N parts' budget
        was N times what any of them had)."""
        merged = cls(max_pages=max((result.max_pages for result in results), default=0))
        for result in results:
            merged.engine = merged.engine or result.engine
            merged.unavailable = merged.unavailable or result.unavailable
            merged.texts.update(result.texts)
            merged.lines.update(result.lines)
            merged.illegible.extend(result.illegible)
            merged.over_page_budget.extend(result.over_page_budget)
            merged.over_time_budget.extend(result.over_time_budget)
            merged.failed.extend(result.failed)
            merged.first_failure = merged.first_failure or result.first_failure
            merged.seconds = max(merged.seconds, result.seconds)
        return merged

    @property
    def recognised_pages(self) -> tuple[int, ...]:
        """1-based numbers of the pages whose text came from recognition."""
        return tuple(sorted(index + 1 for index in self.texts))

    def ocr_lines(self) -> tuple[OcrLine, ...]:
        """The recognised lines of every page read, in page order (1-based pages)."""
        return tuple(
            OcrLine(index + 1, (x0, y0, x1, y1), text)
            for index in sorted(self.lines)
            if index in self.texts
            for x0, y0, x1, y1, text in self.lines[index]
        )

    @property
    def left_out(self) -> list[int]:
        """Pages not read for lack of budget (not a verdict on the page)."""
        return sorted(self.over_page_budget + self.over_time_budget)

    def warnings(self) -> list[str]:
        notes: list[str] = []
        if self.texts:
            notes.append(
                f"Text recognised from images (OCR, {self.engine}) on page "
                f"{page_ranges(self.recognised_pages)}; it may contain recognition errors"
            )
        if self.over_page_budget:
            notes.append(
                f"Page {_ranges(self.over_page_budget)} not recognised: the OCR budget of "
                f"{self.max_pages} pages per document was used up (SHORTLIST_OCR__MAX_PAGES)"
            )
        if self.over_time_budget:
            notes.append(
                f"Page {_ranges(self.over_time_budget)} not recognised: the OCR time budget of "
                f"{self.seconds:.0f} s was used up (SHORTLIST_OCR__PAGE_SECONDS, "
                "SHORTLIST_EXTRACTION__TIMEOUT_SECONDS)"
            )
        if self.failed:
            notes.append(
                f"Text recognition failed on page {_ranges(self.failed)} ({self.first_failure})"
            )
        return notes


def _ranges(indexes: Sequence[int]) -> str:
    return page_ranges([index + 1 for index in sorted(indexes)])
