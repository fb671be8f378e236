"""Reading order: an engine's text boxes as paragraphs (a recursive XY cut that keeps columns
apart)."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field

from extract.ocr.engines import TextBox

COLUMN_GAP = 0.5
"""An empty vertical strip at least this many line heights wide separates columns (engines
report whole lines, so a gap that wide is never a word space)."""


STRADDLERS = 25
"""A column gutter may be crossed by one box in this many (a long line, a hyphen jutting in)."""


def layout_text(boxes: Sequence[TextBox]) -> str:
    """Recognised boxes as paragraphs in reading order.

    A recursive XY cut: the widest empty gap splits the boxes, across the page
    (between paragraphs) or down it (between columns, at least
    :data:`COLUMN_GAP` line heights wide, and preferred only when twice as wide as
    the widest gap across); boxes that overlap form lines, read
    left to right. Neighbouring lines of one column join into a paragraph; words
    hyphenated across lines are joined again.
    """
    boxes = [box for box in boxes if box.text.strip()]
    if not boxes:
        return ""
    height = statistics.median(box.y1 - box.y0 for box in boxes) or 1.0
    blocks = _xy_cut(boxes, height)
    paragraphs: list[list[str]] = []
    previous: _Block | None = None
    for block in blocks:
        if previous is not None and _continues(previous, block, height):
            paragraphs[-1].extend(block.lines)
        else:
            paragraphs.append(list(block.lines))
        previous = block
    return "\n\n".join(_join_lines(lines) for lines in paragraphs)


@dataclass
class _Block:
    x0: float
    y0: float
    x1: float
    y1: float
    lines: list[str] = field(default_factory=list)


def _xy_cut(boxes: list[TextBox], height: float) -> list[_Block]:
    if len(boxes) > 1:
        y_gap, y_groups = _split(boxes, vertical=True)
        x_gap, x_groups = _split(boxes, vertical=False)
        if x_gap < COLUMN_GAP * height:
            x_gap, x_groups = max((x_gap, x_groups), _column_gap(boxes), key=lambda cut: cut[0])
        use_x = x_gap >= COLUMN_GAP * height and x_gap / 2 > y_gap
        groups = x_groups if use_x else y_groups
        if len(groups) > 1 and (use_x or y_gap > 0):
            return [block for group in groups for block in _xy_cut(group, height)]
    return [_leaf(boxes)]


def _split(boxes: list[TextBox], *, vertical: bool) -> tuple[float, list[list[TextBox]]]:
    """The widest gap along one axis (0 when none), and the boxes split at every gap that wide."""

    def span(box: TextBox) -> tuple[float, float]:
        return (box.y0, box.y1) if vertical else (box.x0, box.x1)

    ordered = sorted(boxes, key=span)
    gaps: list[tuple[int, float]] = []
    reach = span(ordered[0])[1]
    for index in range(1, len(ordered)):
        start, end = span(ordered[index])
        if start > reach:
            gaps.append((index, start - reach))
        reach = max(reach, end)
    if not gaps:
        return 0.0, [boxes]
    widest = max(gap for _, gap in gaps)
    cuts = [index for index, gap in gaps if gap >= widest * 0.999]
    groups = [ordered[a:b] for a, b in zip([0, *cuts], [*cuts, len(ordered)], strict=True)]
    return widest, groups


def _column_gap(boxes: list[TextBox]) -> tuple[float, list[list[TextBox]]]:
    """The widest vertical strip crossed by at most 1 in :data:`STRADDLERS` boxes, and the
    boxes split at its middle (by their centres): a gutter a long line juts into."""
    allowed = len(boxes) // STRADDLERS
    if allowed == 0:
        return 0.0, [boxes]
    events = sorted([(box.x0, 1) for box in boxes] + [(box.x1, -1) for box in boxes])
    best, best_at, covered, opened = 0.0, 0.0, 0, None
    for position, change in events:
        if opened is not None and covered + change > allowed:
            if position - opened > best:
                best, best_at = position - opened, (opened + position) / 2
            opened = None
        covered += change
        if covered <= allowed and opened is None and covered > 0:
            opened = position
    left = [box for box in boxes if (box.x0 + box.x1) / 2 < best_at]
    right = [box for box in boxes if (box.x0 + box.x1) / 2 >= best_at]
    if not left or not right:
        return 0.0, [boxes]
    return best, [left, right]


def _leaf(boxes: list[TextBox]) -> _Block:
    """Boxes with no clean gap between them: grouped into lines by vertical overlap."""
    lines: list[list[TextBox]] = []
    for box in sorted(boxes, key=lambda b: (b.y0 + b.y1) / 2):
        centre = (box.y0 + box.y1) / 2
        if lines and lines[-1][-1].y0 <= centre <= max(b.y1 for b in lines[-1]):
            lines[-1].append(box)
        else:
            lines.append([box])
    return _Block(
        min(b.x0 for b in boxes),
        min(b.y0 for b in boxes),
        max(b.x1 for b in boxes),
        max(b.y1 for b in boxes),
        [" ".join(b.text for b in sorted(line, key=lambda b: b.x0)) for line in lines],
    )


def _continues(previous: _Block, block: _Block, height: float) -> bool:
    """True when ``block`` is the next line(s) of ``previous``'s paragraph."""
    overlap = min(previous.x1, block.x1) - max(previous.x0, block.x0)
    return 0 <= block.y0 - previous.y1 < 0.8 * height and overlap > 0


def _join_lines(lines: list[str]) -> str:
    text = ""
    for line in lines:
        if text.endswith("-") and line[:1].islower():
            text = text[:-1] + line
        else:
            text = f"{text} {line}" if text else line
    return text
