"""Markdown building blocks shared by every format: tables and page assembly."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from extract.errors import EmptyDocumentError
from extract.page_markers import neutralise_page_markers, page_marker
from extract.types import Extraction, Kind


def page_ranges(pages: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"`` (1-based numbers in, text out)."""
    ranges: list[str] = []
    start = previous = pages[0]
    for number in [*pages[1:], None]:
        if number is not None and number == previous + 1:
            previous = number
            continue
        ranges.append(str(start) if start == previous else f"{start}-{previous}")
        if number is not None:
            start = previous = number
    return ", ".join(ranges)


def escape_cell(value: object) -> str:
    """One table cell as Markdown: ``|`` escaped, line breaks flattened."""
    text = "" if value is None else str(value)
    text = text.replace("\\", "\\\\").replace("|", "\\|")
    return " ".join(text.split())


def markdown_table(rows: Iterable[Sequence[object]]) -> str:
    """A GitHub-style Markdown table; the first row is the header.

    Rows are padded to the widest row. Returns ``""`` when there are no rows.
    """
    cells = [[escape_cell(value) for value in row] for row in rows]
    if not cells:
        return ""
    width = max(len(row) for row in cells)
    if width == 0:
        return ""
    padded = [row + [""] * (width - len(row)) for row in cells]
    lines = ["| " + " | ".join(padded[0]) + " |", "|" + "---|" * width]
    lines.extend("| " + " | ".join(row) + " |" for row in padded[1:])
    return "\n".join(lines)


def assemble_pages(bodies: Sequence[str], kind: Kind, warnings: Iterable[str] = ()) -> Extraction:
    """Join per-page Markdown bodies behind page markers.

    Marker look-alikes inside a body are neutralised first: a document that
    itself contains marker lines must not fake page breaks.

    Raises:
        EmptyDocumentError: when no page has any non-whitespace text.
    """
    if not any(body.strip() for body in bodies):
        raise EmptyDocumentError()
    parts: list[str] = []
    offsets: list[int] = []
    position = 0
    for number, body in enumerate(bodies, start=1):
        offsets.append(position)
        text = f"{page_marker(number)}\n\n{neutralise_page_markers(body.strip())}\n\n"
        parts.append(text)
        position += len(text)
    return Extraction(
        markdown="".join(parts),
        page_count=len(bodies),
        page_offsets=tuple(offsets),
        kind=kind,
        warnings=tuple(warnings),
    )
