"""Vertical CJK pages (tategaki): read column by column, right to left, as prose.

A Japanese page set vertically reaches PyMuPDF as one "line" per character,
stacked down the page. The layout model takes the stacks for table cells (a
``<br>`` after every character); the plain blocks give the characters with the
columns interleaved. :func:`is_vertical` tells such a page from its blocks, and
:func:`vertical_paragraphs` rebuilds its text: characters are stacked into
columns (the same x, one under the other), columns into tiers (bands of the
page whose columns overlap vertically, read top to bottom, as newspapers and
gazettes are), each tier's columns right to left, and a column that stops short
of its tier's foot ends a paragraph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from extract.fidelity import is_cjk

__all__ = [
    "MIN_VERTICAL_LINES",
    "MIN_VERTICAL_SHARE",
    "is_vertical",
    "vertical_paragraphs",
]

MIN_VERTICAL_SHARE = 0.6
"""A page is vertical when at least this share of its text lines are one CJK character."""
MIN_VERTICAL_LINES = 20


def is_vertical(blocks: Sequence[Sequence[Any]]) -> bool:
    """Whether a page's ``get_text("blocks")`` output is vertical CJK writing."""
    lines = [
        line.strip()
        for block in blocks
        if block[6] == 0
        for line in str(block[4]).splitlines()
        if line.strip()
    ]
    single = sum(1 for line in lines if len(line) == 1 and is_cjk(line))
    return single >= MIN_VERTICAL_LINES and single >= MIN_VERTICAL_SHARE * len(lines)


@dataclass
class _Column:
    x1: float
    top: float
    bottom: float
    height: float
    """The character height (one step down the column)."""
    chars: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _Glyph:
    centre: float
    x1: float
    top: float
    bottom: float
    width: float
    text: str


def _glyphs(page: Any) -> list[_Glyph]:
    glyphs: list[_Glyph] = []
    for block in page.get_text("dict")["blocks"]:
        for line in block.get("lines", ()):
            text = "".join(span["text"] for span in line["spans"]).strip()
            if text:
                x0, top, x1, bottom = line["bbox"]
                glyphs.append(_Glyph((x0 + x1) / 2, x1, top, bottom, max(x1 - x0, 1.0), text))
    return glyphs


def _columns(page: Any) -> list[_Column]:
    """Glyphs on one vertical axis, cut where a gap of more than a character opens."""
    stacks: list[list[_Glyph]] = []
    for glyph in sorted(_glyphs(page), key=lambda g: -g.centre):
        if stacks and abs(stacks[-1][0].centre - glyph.centre) <= 0.4 * stacks[-1][0].width:
            stacks[-1].append(glyph)
        else:
            stacks.append([glyph])
    columns: list[_Column] = []
    for stack in stacks:
        column: _Column | None = None
        for glyph in sorted(stack, key=lambda g: g.top):
            height = max(glyph.bottom - glyph.top, 1.0)
            if column is None or glyph.top - column.bottom > height:
                column = _Column(glyph.x1, glyph.top, glyph.bottom, height)
                columns.append(column)
            column.chars.append(glyph.text)
            column.bottom = max(column.bottom, glyph.bottom)
            column.x1 = max(column.x1, glyph.x1)
    return columns


def _tiers(columns: list[_Column]) -> list[list[_Column]]:
    """Columns grouped into bands whose vertical extents overlap, top band first."""
    tiers: list[tuple[float, float, list[_Column]]] = []
    for column in sorted(columns, key=lambda c: c.top):
        for i, (top, bottom, members) in enumerate(tiers):
            if column.top < bottom - column.height and column.bottom > top + column.height:
                members.append(column)
                tiers[i] = (min(top, column.top), max(bottom, column.bottom), members)
                break
        else:
            tiers.append((column.top, column.bottom, [column]))
    return [members for _, _, members in sorted(tiers, key=lambda tier: tier[0])]


def vertical_paragraphs(page: Any) -> list[str]:
    """The page's text in reading order: tiers top to bottom, columns right to left."""
    paragraphs: list[str] = []
    for tier in _tiers(_columns(page)):
        foot = max(column.bottom for column in tier)
        current: list[str] = []
        for column in sorted(tier, key=lambda c: -c.x1):
            current.append("".join(column.chars))
            if column.bottom < foot - 1.5 * column.height:
                paragraphs.append("".join(current))
                current = []
        if current:
            paragraphs.append("".join(current))
    return [paragraph for paragraph in paragraphs if paragraph]
