"""Recognising a document's pages one by one within its budget (pages and seconds, never past
the caller's deadline)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from extract.ocr.engines import NoEngine, OcrEngine, select_engine
from extract.ocr.layout import layout_text
from extract.ocr.page_image import PageImage
from extract.ocr.result import OcrResult
from extract.types import ExtractionLimits, OcrOptions

MIN_RECOGNISED_CHARS = 4
"""Recognised text with fewer letters/digits than this is noise (specks on a blank page)."""


OCR_TIMEOUT_SHARE = 0.75
"""Share of the extraction timeout that recognition may use, so a long scan ends with a
warning for the pages it did not reach instead of being killed."""


def ocr_deadline(started: float, limits: ExtractionLimits) -> float:
    """The latest time recognition may start a page, for an extraction begun at ``started``."""
    return started + limits.timeout_seconds * OCR_TIMEOUT_SHARE


def recognise_pages(
    render: Callable[[int], PageImage],
    pages: Sequence[int],
    options: OcrOptions,
    *,
    deadline: float,
    clock: Callable[[], float],
    engine: OcrEngine | NoEngine | None = None,
    on_recognised: Callable[[int], None] | None = None,
) -> OcrResult:
    """Recognise ``pages`` (0-based) in order, within the budget; ``render`` draws one;
    ``on_recognised`` is told each page whose text was read, as soon as it is.

    The engine (``select_engine(options)`` unless given) loads only when there is
    a page to read. A page starts only while its expected time (the slowest page
    so far) still fits before the earlier of ``deadline`` and ``page_seconds`` per
    page of ``pages`` from now. A page the engine fails on is reported, not fatal.
    """
    result = OcrResult(max_pages=options.max_pages)
    if not pages:
        return result
    chosen = engine if engine is not None else select_engine(options)
    if isinstance(chosen, NoEngine):
        result.unavailable = chosen.reason
        return result
    result.engine = chosen.name
    started = clock()
    budget_end = min(deadline, started + options.page_seconds * len(pages))
    result.seconds = max(budget_end - started, 0.0)
    slowest = 0.0
    for position, index in enumerate(pages):
        if position >= options.max_pages:
            result.over_page_budget.append(index)
            continue
        now = clock()
        if now + slowest > budget_end:
            result.over_time_budget.append(index)
            continue
        try:
            image = render(index)
            boxes = [] if image.is_blank() else chosen.recognise(image)
            text = layout_text(boxes) if boxes else ""
        except MemoryError:
            raise
        except Exception as exc:
            result.failed.append(index)
            result.first_failure = result.first_failure or (str(exc) or type(exc).__name__)
            continue
        finally:
            slowest = max(slowest, clock() - now)
        if sum(1 for char in text if char.isalnum()) >= MIN_RECOGNISED_CHARS:
            result.texts[index] = text
            width, height = max(image.width, 1), max(image.height, 1)
            result.lines[index] = [
                (box.x0 / width, box.y0 / height, box.x1 / width, box.y1 / height, box.text)
                for box in boxes
            ]
            if on_recognised is not None:
                on_recognised(index)
        else:
            result.illegible.append(index)
    return result
