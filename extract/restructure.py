"""A page's text layer, with the headings and tables the layout model found.

When a page's layout Markdown loses or invents too many words
(:func:`extract.reconcile.reconcile` says ``"plain"``), the page is rendered
from its text layer's paragraphs instead, but its structure is carried over:

* a layout heading whose words open a paragraph (or make up a run of
  paragraphs) turns those words into that heading;
* a layout table replaces the paragraphs whose words it holds, at the first of
  them, when they hold its words too (at least :data:`MIN_TABLE_PRECISION` of
  them both ways): a table that cuts or repeats words is left out. A table the
  layout model merged with the prose beside it (a column of running text next to
  a figure's table: ``tracemonkey.pdf`` p. 8) is tried again without its first
  or last columns, up to :data:`MAX_DROPPED_COLUMNS` of them, and kept without
  them when what is left passes; the prose stays the text layer's paragraphs.

Anything else of the layout (lists, emphasis, figure text) is left out.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from extract.fidelity import compare, markdown_words, normalise, strip_markup, words

__all__ = [
    "MAX_DROPPED_COLUMNS",
    "MIN_COVERED",
    "MIN_TABLE_PRECISION",
    "with_layout_structure",
]

MIN_TABLE_PRECISION = 0.95
"""A layout table is kept when it and the paragraphs it replaces share this much of their
words (recall and precision of one against the other)."""
MIN_COVERED = 0.8
"""A paragraph is the table's when at least this share of its words are in the table."""

MAX_DROPPED_COLUMNS = 2
"""Columns a merged layout table may lose at either edge (and keep two at least)."""

_HEADING = re.compile(r"^(#{1,6}) (.+)$")


def _blocks(markdown: str) -> list[str]:
    return [block.strip() for block in re.split(r"\n\s*\n", markdown) if block.strip()]


def _is_table(block: str) -> bool:
    return all(line.lstrip().startswith("|") for line in block.splitlines())


def _fold(text: str) -> list[str]:
    """Each character's normalised letters and digits, in order."""
    return [folded for char in text for folded in normalise(char) if folded.isalnum()]


def _split_at(paragraph: str, count: int) -> tuple[str, str]:
    """``paragraph`` cut after the character holding its ``count``-th letter or digit."""
    seen = 0
    for position, char in enumerate(paragraph):
        seen += sum(1 for folded in normalise(char) if folded.isalnum())
        if seen >= count:
            return paragraph[: position + 1].strip(), paragraph[position + 1 :].strip()
    return paragraph, ""


def _place_heading(paragraphs: list[str], level: str, heading: str, start: int) -> int:
    """Mark ``heading``'s words in ``paragraphs`` from ``start``; the index after it, or -1."""
    wanted = "".join(_fold(strip_markup(heading)))
    if not wanted:
        return -1
    for first in range(start, len(paragraphs)):
        if paragraphs[first].startswith(("#", "|")):
            continue
        gathered = ""
        for last in range(first, min(len(paragraphs), first + 4)):
            gathered += "".join(_fold(paragraphs[last]))
            if gathered == wanted:
                text = " ".join(paragraphs[first : last + 1])
                paragraphs[first : last + 1] = [f"{level} {text}"]
                return first + 1
            if gathered.startswith(wanted):
                if last == first:
                    head, rest = _split_at(paragraphs[first], len(wanted))
                    paragraphs[first : first + 1] = [f"{level} {head}", rest]
                    return first + 1
                break
            if not wanted.startswith(gathered):
                break
    return -1


def _cells(line: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` inside a cell is not a border)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return re.split(r"(?<!\\)\|", inner)


def _without_edge_columns(table: str, left: int, right: int) -> str | None:
    """``table`` without its ``left`` first and ``right`` last columns, or None when a row
    has another number of cells or fewer than two columns would be left."""
    rows = [_cells(line) for line in table.splitlines()]
    width = len(rows[0])
    if any(len(row) != width for row in rows) or width - left - right < 2:
        return None
    return "\n".join("|" + "|".join(row[left : width - right]) + "|" for row in rows)


def _table_cover(paragraphs: Sequence[str], table: str) -> list[int] | None:
    """The paragraphs ``table`` may replace (see :func:`_place_table`), or None."""
    cells = markdown_words(table)
    remaining = Counter(cells)
    covered: list[int] = []
    taken: Counter[str] = Counter()
    for index, paragraph in enumerate(paragraphs):
        if paragraph.startswith(("#", "|")):
            continue
        own = words(paragraph)
        if own and sum((own & remaining).values()) >= MIN_COVERED * sum(own.values()):
            covered.append(index)
            remaining -= own
            taken += own
    same = compare(taken, cells)
    if not covered or min(same.recall, same.precision) < MIN_TABLE_PRECISION:
        return None
    return covered


def _place_table(paragraphs: list[str], table: str) -> None:
    """Put ``table`` in place of the paragraphs whose words it holds, when those paragraphs
    hold its words too (the same words, both ways, to :data:`MIN_TABLE_PRECISION`); failing
    that, the same without a column or two of prose at its edges (see the module)."""
    trimmed = (
        _without_edge_columns(table, left, right)
        for dropped in range(1, MAX_DROPPED_COLUMNS + 1)
        for left in range(dropped + 1)
        for right in (dropped - left,)
    )
    for candidate in (table, *trimmed):
        if candidate is None:
            continue
        covered = _table_cover(paragraphs, candidate)
        if covered is not None:
            paragraphs[covered[0]] = candidate
            for index in reversed(covered[1:]):
                del paragraphs[index]
            return


def with_layout_structure(layout: str, paragraphs: Sequence[str], layer: str) -> str:
    """The page as its text layer's ``paragraphs``, with ``layout``'s headings and tables."""
    result = list(paragraphs)
    position = 0
    for block in _blocks(layout):
        if _is_table(block):
            _place_table(result, block)
            continue
        found = _HEADING.match(block)
        if found is not None and "\n" not in block:
            after = _place_heading(result, found.group(1), found.group(2), position)
            if after < 0:  # the layout reads columns in another order than the blocks
                after = _place_heading(result, found.group(1), found.group(2), 0)
            if after >= 0:
                position = after
    return "\n\n".join(paragraph for paragraph in result if paragraph)
