"""Where a PDF page's figures are: picture and drawing regions, with their captions.

A figure is an image block, or a cluster of vector drawings, covering at least
:data:`MIN_SHARE` of the page and at least :data:`MIN_SIDE` points on its shorter side, with
its caption ("Figure 3: …", "Fig. 3.", "FIGURE 3") when one sits just below or above it.
Left out: page furniture (anything wholly inside the top or bottom :data:`MARGIN_SHARE` of the
page: logos, running heads, rules), thin rules and boxes, a picture covering nearly the whole
page (a scan's own image, or a background), and drawn boxes full of text (a table's or a
form's grid, whose text the Markdown already holds). Only boxes and captions are kept, never
pixels: a figure is drawn from the original when asked for
(:mod:`extract.page_render`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from extract.types import Figure, Rect

__all__ = [
    "ABOVE_PENALTY",
    "CAPTION",
    "CAPTION_MAX_CHARS",
    "CAPTION_REACH",
    "GAP_POINTS",
    "MARGIN_SHARE",
    "MAX_FIGURES_PER_PAGE",
    "MAX_SHARE",
    "MAX_WORDS",
    "MIN_SHARE",
    "MIN_SIDE",
    "TEXT_SHARE",
    "find_figures",
]

MIN_SHARE = 0.02
"""Smallest share of the page's area a figure covers."""
MAX_SHARE = 0.9
"""A picture covering more of the page than this is the page itself (a scan), not a figure."""
MIN_SIDE = 36.0
"""Shortest side of a figure, in points (half an inch): rules and thin bars are not figures."""
MARGIN_SHARE = 0.07
"""Top and bottom bands of the page where running heads, logos and rules sit."""
TEXT_SHARE = 0.35
"""A drawing cluster whose area is more than this share words is a table or a form, not a
figure."""
MAX_WORDS = 150
"""A drawing cluster holding more words than this is a table or a form, not a figure."""
MAX_FIGURES_PER_PAGE = 12
"""Most figures kept on one page (the largest)."""
GAP_POINTS = 14.0
"""Regions closer than this are one figure (a chart's axes and its picture)."""
CAPTION_REACH = 0.12
"""How far (a share of the page's height) a caption may sit from its figure."""
ABOVE_PENALTY = 40.0
"""Points added to the distance of a caption above its figure: figures are captioned below,
so a caption above is more likely the one of the figure before."""
CAPTION_MAX_CHARS = 400

CAPTION = re.compile(r"\s*(fig(?:ure)?\.?)\s*(\d{1,3}[a-z]?)\b\s*[:.|—–-]?", re.IGNORECASE)
"""How a caption starts: "Figure 3:", "Fig. 3.", "FIGURE 3 —"."""


def _area(rect: Rect) -> float:
    return max(0.0, rect[2] - rect[0]) * max(0.0, rect[3] - rect[1])


def _union(a: Rect, b: Rect) -> Rect:
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


def _near(a: Rect, b: Rect, gap: float) -> bool:
    return a[0] - gap <= b[2] and b[0] - gap <= a[2] and a[1] - gap <= b[3] and b[1] - gap <= a[3]


def _clip(rect: Rect, page: Rect) -> Rect:
    return (
        max(rect[0], page[0]),
        max(rect[1], page[1]),
        min(rect[2], page[2]),
        min(rect[3], page[3]),
    )


def _merge(regions: list[tuple[Rect, bool]]) -> list[tuple[Rect, bool]]:
    """Regions that touch (within :data:`GAP_POINTS`) joined; each says whether it holds a
    picture (an image block) rather than drawings only."""
    merged = list(regions)
    changed = True
    while changed:
        changed = False
        for first in range(len(merged)):
            for second in range(first + 1, len(merged)):
                (a, picture_a), (b, picture_b) = merged[first], merged[second]
                if _near(a, b, GAP_POINTS):
                    merged[first] = (_union(a, b), picture_a or picture_b)
                    del merged[second]
                    changed = True
                    break
            if changed:
                break
    return merged


def _regions(page: Any) -> list[tuple[Rect, bool]]:
    found: list[tuple[Rect, bool]] = []
    for info in page.get_image_info():
        x0, y0, x1, y1 = info["bbox"]
        found.append(((float(x0), float(y0), float(x1), float(y1)), True))
    try:
        clusters = page.cluster_drawings()
    except Exception:  # a drawing MuPDF cannot follow: the pictures still count
        clusters = []
    for rect in clusters:
        found.append(((float(rect.x0), float(rect.y0), float(rect.x1), float(rect.y1)), False))
    return found


def _wordy(rect: Rect, words: Sequence[Sequence[Any]]) -> bool:
    """Whether the region is mostly text: a table's or a form's grid, not a diagram."""
    inside = 0.0
    count = 0
    for x0, y0, x1, y1, *_ in words:
        if x0 >= rect[0] and x1 <= rect[2] and y0 >= rect[1] and y1 <= rect[3]:
            inside += _area((x0, y0, x1, y1))
            count += 1
    return count > MAX_WORDS or inside / max(_area(rect), 1e-6) > TEXT_SHARE


def _captions(page: Any) -> list[tuple[Rect, str, str]]:
    """Every caption on the page: a line that starts like one, through the end of its block."""
    found: list[tuple[Rect, str, str]] = []
    for block in page.get_text("dict")["blocks"]:
        lines = [
            (line["bbox"], "".join(span["text"] for span in line["spans"]))
            for line in block.get("lines", ())
        ]
        for index, (bbox, text) in enumerate(lines):
            match = CAPTION.match(text)
            if match is None:
                continue
            rest = lines[index:]
            where: Rect = tuple(float(v) for v in bbox)  # type: ignore[assignment]
            for other, _ in rest[1:]:
                where = _union(where, tuple(float(v) for v in other))  # type: ignore[arg-type]
            caption = " ".join(" ".join(text for _, text in rest).split())[:CAPTION_MAX_CHARS]
            found.append((where, caption, f"Figure {match.group(2)}"))
            break
    return found


def _turned(rect: Rect, matrix: Any) -> Rect:
    import pymupdf

    library: Any = pymupdf
    turned = library.Rect(*rect) * matrix
    return (float(turned.x0), float(turned.y0), float(turned.x1), float(turned.y1))


def _gap(figure: Rect, caption: Rect) -> float | None:
    """How far the caption sits below the figure (above counts :data:`ABOVE_PENALTY` more), or None when
    it is beside it, across it or out of line with it."""
    if caption[2] < figure[0] or caption[0] > figure[2]:
        return None
    below = caption[1] - figure[3]
    if below >= -2:
        return max(below, 0.0)
    above = figure[1] - caption[3]
    if above >= -2:
        return max(above, 0.0) + ABOVE_PENALTY
    return None


def find_figures(page: Any, number: int) -> list[Figure]:
    """The figures of one PyMuPDF page (page ``number``, 1-based), top to bottom."""
    bounds = page.rect
    box: Rect = (float(bounds.x0), float(bounds.y0), float(bounds.x1), float(bounds.y1))
    page_area = max(_area(box), 1e-6)
    height = box[3] - box[1]
    top, bottom = box[1] + MARGIN_SHARE * height, box[3] - MARGIN_SHARE * height
    words = page.get_text("words")
    kept: list[Rect] = []
    for rect, picture in _merge([(_clip(rect, box), picture) for rect, picture in _regions(page)]):
        share = _area(rect) / page_area
        if not MIN_SHARE <= share <= MAX_SHARE:
            continue
        if min(rect[2] - rect[0], rect[3] - rect[1]) < MIN_SIDE:
            continue
        if rect[3] <= top or rect[1] >= bottom:
            continue
        if not picture and _wordy(rect, words):
            continue
        kept.append(rect)
    kept.sort(key=_area, reverse=True)
    kept = sorted(kept[:MAX_FIGURES_PER_PAGE], key=lambda rect: (rect[1], rect[0]))
    captions = _captions(page)
    pairs = sorted(
        (gap, figure, caption)
        for figure, rect in enumerate(kept)
        for caption, (where, _, _) in enumerate(captions)
        if (gap := _gap(rect, where)) is not None and gap <= CAPTION_REACH * height
    )
    given: dict[int, int] = {}
    taken: set[int] = set()
    for _, figure, caption in pairs:  # the nearest pairs first; each caption names one figure
        if figure not in given and caption not in taken:
            given[figure] = caption
            taken.add(caption)
    figures = []
    turn = page.rotation_matrix if page.rotation else None
    for figure, rect in enumerate(kept):
        if turn is not None:  # MuPDF measures the unrotated page; keep boxes as it is shown
            rect = _turned(rect, turn)
        if figure in given:
            where, text, label = captions[given[figure]]
            if turn is not None:
                where = _turned(where, turn)
            figures.append(Figure(number, _union(rect, where), text, label))
        else:
            figures.append(Figure(number, rect))
    return figures
