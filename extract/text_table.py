"""Tables without rules, built from the text layer: rows of lines side by side.

Exhibits, field lists and indexes are often set as rows of text side by side with
no rules drawn (the IRS manual's LINE / POSITION / DESCRIPTION exhibits). The
layout model makes a Markdown table of them at about 0.7 CPU-seconds a page; the
positions PyMuPDF already read give the same table for a few milliseconds:

- the page's lines are grouped into *rows* (lines sharing a band of the page);
- a *table* is a run of rows of two or more lines side by side
  (:data:`MIN_TABLE_ROWS` or more), with the single lines between them that
  continue a cell of a later column (a description wrapped onto a second line, a
  list of codes under a field) as rows of their own, as the model gives them;
- its *columns* are the x-ranges of the cells merged across rows (cells that
  overlap horizontally are one column);
- a run ends at a line that is no such continuation, at a drawn rule between rows,
  at a gap of more than :data:`MAX_ROW_GAP` line heights, and at the running foot:
  a row there continues a table only when each of its cells falls in one of its
  columns, a single line only when it is set as tight below the row above as a
  cell's wrapped line.

:func:`find_tables` declines (``None``) what it cannot render faithfully: a run
whose cells do not fall into one column each (a cell spanning two columns), with
fewer than two columns, or with two columns of wide cells (columns of prose, which
the model reads in order).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from extract.fidelity import join_hyphenated

__all__ = [
    "LIST_LABEL",
    "MAX_ROW_GAP",
    "MIN_TABLE_ROWS",
    "PROSE_FILL",
    "PROSE_SHARE",
    "PROSE_WORDS",
    "WIDE_CELL_SHARE",
    "Row",
    "TextLine",
    "TextTable",
    "find_tables",
    "group_rows",
    "table_markdown",
]

MIN_TABLE_ROWS = 3
"""Rows of side-by-side lines from which a run of rows is a table."""
MAX_ROW_GAP = 3.0
"""A gap between rows of more than this many line heights ends a table."""
WIDE_CELL_SHARE = 0.3
"""A column whose widest cell spans this share of the page is a column of prose; a run
with two of them is text in columns, not a table."""
PROSE_WORDS = 4
PROSE_FILL = 0.7
PROSE_SHARE = 0.6
"""A column of which this share of cells are lines of :data:`PROSE_WORDS` words or more
filling :data:`PROSE_FILL` of its width is prose; a run with two is text in columns."""
LIST_LABEL = re.compile(r"^(?:\(?[0-9A-Za-z]{1,3}[.)]|\([0-9A-Za-z]{1,3}\)|[•●▪◦■□–∙·*-])$")
"""A list item's label ("(1)", "a.", "iv)", a bullet)."""
_HYPHEN_END = re.compile(r"(?<![^\W\d_])[^\W\d_]{2,}[-\u00ad\u2010]\s*$")
_ALIGN = 3.0
"""Points by which a continuation line's start may miss its column's."""
_BOLD = 16


@dataclass(frozen=True, eq=False)
class TextLine:
    """One line of PyMuPDF's ``dict`` text, with the block it came from (compared by
    identity: a page's lines are read once)."""

    block: int
    number: int
    """The line's place in its block."""
    bbox: tuple[float, float, float, float]
    spans: tuple[dict[str, Any], ...]

    @property
    def text(self) -> str:
        return "".join(span["text"] for span in self.spans)


class Row(NamedTuple):
    """Lines sharing a band of the page, left to right."""

    lines: tuple[TextLine, ...]

    @property
    def top(self) -> float:
        return min(line.bbox[1] for line in self.lines)

    @property
    def bottom(self) -> float:
        return max(line.bbox[3] for line in self.lines)

    @property
    def side_by_side(self) -> bool:
        """Two or more lines, none overlapping the next horizontally."""
        return len(self.lines) > 1 and all(
            second.bbox[0] >= first.bbox[2] - 1
            for first, second in zip(self.lines, self.lines[1:], strict=False)
        )


class TextTable(NamedTuple):
    rows: tuple[tuple[str, ...], ...]
    """Cell texts, the first row the header."""
    lines: frozenset[TextLine]
    """The page lines the table holds (their blocks render as the table)."""
    top: float


def group_rows(lines: Sequence[TextLine]) -> list[Row]:
    """Lines grouped into rows top to bottom: a line joins the row it shares more than half
    of its height with."""
    rows: list[list[TextLine]] = []
    for line in sorted(lines, key=lambda line: (line.bbox[1] + line.bbox[3]) / 2):
        if rows:
            row = rows[-1]
            top, bottom = min(x.bbox[1] for x in row), max(x.bbox[3] for x in row)
            shared = min(bottom, line.bbox[3]) - max(top, line.bbox[1])
            height = min(bottom - top, line.bbox[3] - line.bbox[1])
            if height > 0 and shared > 0.5 * height:
                row.append(line)
                continue
        rows.append([line])
    return [Row(tuple(sorted(row, key=lambda line: line.bbox[0]))) for row in rows]


def _height(row: Row) -> float:
    return min(line.bbox[3] - line.bbox[1] for line in row.lines)


def _columns(rows: Sequence[Row]) -> list[tuple[float, float]]:
    """The x-ranges of the side-by-side rows' cells, overlapping ones merged."""
    spans = sorted(
        (line.bbox[0], line.bbox[2]) for row in rows if row.side_by_side for line in row.lines
    )
    merged: list[list[float]] = []
    for start, end in spans:
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [(start, end) for start, end in merged]


def _column_of(line: TextLine, columns: Sequence[tuple[float, float]]) -> int | None:
    """The column a line overlaps most, if any."""
    best, most = None, 0.0
    for index, (start, end) in enumerate(columns):
        overlap = min(end, line.bbox[2]) - max(start, line.bbox[0])
        if overlap > most:
            best, most = index, overlap
    return best


def _continues(line: TextLine, run: Sequence[Row]) -> bool:
    """Whether a line alone on its row starts right of the run's first column (where a
    later cell does, or further in: an indented second line, a centred subheading)."""
    starts = [cell.bbox[0] for row in run if row.side_by_side for cell in row.lines[1:]]
    return bool(starts) and line.bbox[0] >= min(starts) - _ALIGN


def _ruled_between(rules: Sequence[float], above: float, below: float) -> bool:
    return any(above <= y <= below for y in rules)


def _runs(
    rows: Sequence[Row], body: tuple[float, float], rules: Sequence[float]
) -> list[list[Row]]:
    """Runs of rows that may be tables (see the module); ``body`` is the band between the
    running head and foot, ``rules`` the heights of horizontal rules drawn on the page."""
    runs: list[list[Row]] = []
    run: list[Row] = []
    for row in rows:
        if run:
            last = run[-1]
            gap = row.top - last.bottom
            joins = (
                gap <= MAX_ROW_GAP * min(_height(row), _height(last))
                and not _ruled_between(rules, last.bottom, row.top)
                and (row.side_by_side or (len(row.lines) == 1 and _continues(row.lines[0], run)))
            )
            if joins and row.bottom > body[1] and not row.side_by_side:
                joins = gap <= _height(row)  # a cell's wrapped line, set tight below it
            elif joins and row.bottom > body[1]:
                columns = _columns(run)
                joins = all(
                    any(
                        start - _ALIGN <= line.bbox[0] and line.bbox[2] <= end + _ALIGN
                        for start, end in columns
                    )
                    for line in row.lines
                )
            if joins:
                run.append(row)
                continue
            runs.append(run)
            run = []
        if row.side_by_side and row.top >= body[0] and row.bottom <= body[1]:
            run = [row]
    if run:
        runs.append(run)
    return [run for run in runs if sum(row.side_by_side for row in run) >= MIN_TABLE_ROWS]


def _cell_text(lines: Sequence[TextLine]) -> str:
    text = " ".join(join_hyphenated("\n".join(line.text for line in lines)).split())
    text = text.replace("|", "\\|")
    spans = [span for line in lines for span in line.spans if span["text"].strip()]
    if text and spans and all(span["flags"] & _BOLD for span in spans):
        return f"**{text}**"
    return text


def _prose(run: Sequence[Row], column: tuple[float, float]) -> bool:
    """Whether most of a column's cells are lines of prose: words filling its width."""
    start, end = column
    cells = [
        line
        for row in run
        for line in row.lines
        if start <= (line.bbox[0] + line.bbox[2]) / 2 <= end
    ]
    full = [
        line
        for line in cells
        if len(line.text.split()) >= PROSE_WORDS
        and line.bbox[2] - line.bbox[0] >= PROSE_FILL * (end - start)
    ]
    return len(full) >= PROSE_SHARE * len(cells)


def _hyphenated(above: Sequence[list[TextLine]], below: Sequence[list[TextLine]]) -> bool:
    """Whether a continuation line goes on from a cell ending in a word hyphenated at the
    line's end ("Bemer-" above "kung 37", "MASTER-" above "FILE"; not a code such as
    "CSED:A-" above "DMF:V-")."""
    return any(
        lines
        and upper
        and _HYPHEN_END.search(upper[-1].text) is not None
        and lines[0].text.lstrip()[:1].isalpha()
        for upper, lines in zip(above, below, strict=True)
    )


def _table(run: Sequence[Row], page_width: float) -> TextTable | None:
    columns = _columns(run)
    if len(columns) < 2:
        return None
    wide = [
        index
        for index, (start, end) in enumerate(columns)
        if end - start >= WIDE_CELL_SHARE * page_width
    ]
    if len(wide) > 1 or sum(_prose(run, column) for column in columns) > 1:
        return None
    labels = [row.lines[0].text.strip() for row in run if row.side_by_side]
    if all(LIST_LABEL.match(label) for label in labels):
        return None  # a list, its labels set apart
    rows: list[list[list[TextLine]]] = []
    for row in run:
        placed: list[list[TextLine]] = [[] for _ in columns]
        for line in row.lines:
            index = _column_of(line, columns)
            if index is None:
                return None
            placed[index].append(line)
        if row.side_by_side and any(len(lines) > 1 for lines in placed):
            return None  # one cell spanning two columns
        if not row.side_by_side and rows and _hyphenated(rows[-1], placed):
            for above, below in zip(rows[-1], placed, strict=True):
                above.extend(below)  # a word hyphenated across two rows stays one word
            continue
        rows.append(placed)
    cells = [tuple(_cell_text(lines) for lines in placed) for placed in rows]
    held = frozenset(line for row in run for line in row.lines)
    return TextTable(tuple(cells), held, run[0].top)


def find_tables(
    lines: Sequence[TextLine],
    page_width: float,
    body: tuple[float, float],
    rules: Sequence[float] = (),
) -> list[TextTable] | None:
    """The rule-less tables among a page's lines, or ``None`` when a run of side-by-side
    rows is not one the text layer renders faithfully (see the module)."""
    tables: list[TextTable] = []
    for run in _runs(group_rows(lines), body, rules):
        table = _table(run, page_width)
        if table is None:
            return None
        tables.append(table)
    return tables


def table_markdown(table: TextTable) -> str:
    """The table as a Markdown pipe table, its first row the header."""
    header, *rest = table.rows
    lines = ["|" + "|".join(header) + "|", "|" + "---|" * len(header)]
    lines += ["|" + "|".join(row) + "|" for row in rest]
    return "\n".join(lines)
