"""The fast path: pages that need no layout analysis, rendered straight from the text layer.

Most pages of manuals and books are one column of prose, which the layout model
reads no differently from the text layer, at about 0.7 CPU-seconds a page.
:func:`needs_layout` decides cheaply, from what PyMuPDF already read, whether a
page may hold something only the model recovers: an image with text over it (a
figure's labels, a background), vector graphics beyond a few rules (table grids,
diagrams), or text blocks side by side (columns, or a table without rules). An
image no text overlaps (a screenshot, a photograph) is not read by the model
either (OCR off, it gives nothing for it), and the running head and foot (the
top and bottom :data:`MARGIN_SHARE` of the page: a title beside a page number) do
not count as text side by side, and a block wholly inside that band is never a heading. Every other page is rendered by
:func:`simple_markdown` from ``page.get_text("dict")``: a short block in a font
The lines opening a block are a heading when their font is clearly larger than
the body text's (``#`` from :data:`TITLE_RATIO` times the body size, ``##`` from
:data:`HEADING_RATIO`), or when they are short, set wholly in bold,
and do not end a sentence (``###``); a
block set wholly in a monospaced font is a code block (its lines and spaces
kept), a block opening with a bullet is a list item, and anything else a
paragraph (lines joined, words hyphenated at a line end rejoined).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from extract.fidelity import join_hyphenated

__all__ = [
    "HEADING_RATIO",
    "MARGIN_SHARE",
    "MAX_BOLD_HEADING_CHARS",
    "MAX_BOLD_HEADING_LINES",
    "MAX_HEADING_CHARS",
    "MAX_HEADING_LINES",
    "MAX_RULES",
    "MIN_TABLE_ROWS",
    "TITLE_RATIO",
    "SimplePage",
    "needs_layout",
    "simple_markdown",
]

HEADING_RATIO = 1.15
"""A short block whose font is this many times the body size is a heading."""
TITLE_RATIO = 1.6
"""...a top-level one (``#``) from this ratio."""
MAX_RULES = 3
"""Visible vector paths a page may have and still take the fast path (header and footer rules)."""
MAX_HEADING_CHARS = 150
MAX_HEADING_LINES = 3
"""A heading is at most this many lines (of at most ``MAX_HEADING_CHARS`` each)."""

MARGIN_SHARE = 0.1
"""The running head and foot: lines in this share of the page's height at its top or bottom."""
MIN_TABLE_ROWS = 3
"""Rows of side-by-side lines from which a page is taken for a table (layout's job)."""
MAX_BOLD_HEADING_LINES = 2
MAX_BOLD_HEADING_CHARS = 100

_NUMBERED_CAPITALS = re.compile(r"^\d+(?:\.\d+)*\.? +[^\W\d_][^\W\d_ ]{2,}(?: [^\W\d_]+)*$")
"""A numbered heading in capitals or small capitals ("6 CONCLUSION"): checked for case below."""
_SECTION_NUMBER = re.compile(r"^\d+(?:\.\d+)*\.?$")
_MONOSPACED = 8  # PyMuPDF span flags
_BOLD = 16
_BULLETS = ("•", "●", "▪", "◦", "■", "□", "–", "∙", "·", "-", "*")
_WHITE = (1.0, 1.0, 1.0)


def _visible_paths(page: Any) -> int:
    """Vector paths that draw something on the page (not white, not outside it: crop marks)."""
    rect = page.rect
    count = 0
    for path in page.get_cdrawings():
        box = path.get("rect")
        if box is None or not rect.intersects(box):
            continue
        colour = path.get("fill") if path.get("type") == "f" else path.get("color")
        if colour is None or tuple(colour) == _WHITE:
            continue
        count += 1
    return count


def _side_by_side(blocks: Sequence[Sequence[Any]]) -> bool:
    """Whether two text blocks share a band of the page without overlapping across it."""
    text = [b for b in blocks if b[6] == 0 and str(b[4]).strip()]
    for i, first in enumerate(text):
        for second in text[i + 1 :]:
            shared = min(first[3], second[3]) - max(first[1], second[1])
            if shared > 2 and (second[0] >= first[2] - 1 or first[0] >= second[2] - 1):
                return True
    return False


def _in_body(page: Any, box: Sequence[float]) -> bool:
    """Whether a box is below the running head and above the running foot."""
    top, height = float(page.rect.y0), float(page.rect.height)
    return box[1] >= top + MARGIN_SHARE * height and box[3] <= top + (1 - MARGIN_SHARE) * height


def _in_margin(page: Any, box: Sequence[float]) -> bool:
    """Whether a box lies wholly in the running head's or foot's band (never a heading)."""
    top, height = float(page.rect.y0), float(page.rect.height)
    return box[3] <= top + MARGIN_SHARE * height or box[1] >= top + (1 - MARGIN_SHARE) * height


def _overlaps(first: Sequence[float], second: Sequence[float]) -> bool:
    width = min(first[2], second[2]) - max(first[0], second[0])
    height = min(first[3], second[3]) - max(first[1], second[1])
    return width > 1 and height > 1


def _text_over_images(page: Any, blocks: Sequence[Sequence[Any]]) -> bool:
    """Whether any text block overlaps an image (figure labels, a background, a scan)."""
    images = [info["bbox"] for info in page.get_image_info()]
    images += [block[:4] for block in blocks if block[6] == 1]
    if not images:
        return False
    text = [block[:4] for block in blocks if block[6] == 0 and str(block[4]).strip()]
    return any(_overlaps(image, box) for image in images for box in text)


def needs_layout(page: Any, blocks: Sequence[Sequence[Any]], has_images: bool) -> bool:
    """Whether a page may hold a figure, a table or columns (see the module)."""
    body = [block for block in blocks if _in_body(page, block[:4])]
    return (
        (has_images and _text_over_images(page, blocks))
        or _side_by_side(body)
        or _visible_paths(page) > MAX_RULES
    )


def _line_text(line: dict[str, Any]) -> str:
    return "".join(span["text"] for span in line["spans"])


def _body_size(blocks: list[dict[str, Any]]) -> float:
    sizes: Counter[float] = Counter()
    for block in blocks:
        for line in block["lines"]:
            for span in line["spans"]:
                sizes[round(span["size"], 1)] += len(span["text"].strip())
    return sizes.most_common(1)[0][0] if sizes else 0.0


def _size(spans: list[dict[str, Any]]) -> float:
    weights: Counter[float] = Counter()
    for span in spans:
        weights[round(span["size"], 1)] += len(span["text"].strip())
    return weights.most_common(1)[0][0]


def _heading_level(spans: list[dict[str, Any]], text: str, body: float) -> str:
    """``"#"``, ``"##"`` or ``"###"`` for a line that may belong to a heading, else ``""``."""
    if len(text) > MAX_HEADING_CHARS:
        return ""
    size = _size(spans)
    if body and size >= TITLE_RATIO * body:
        return "#"
    if body and size >= HEADING_RATIO * body:
        return "##"
    if text.endswith((".", ",", ";")) or len(text) > MAX_BOLD_HEADING_CHARS:
        return ""
    capitals = _NUMBERED_CAPITALS.match(text) is not None and not any(c.islower() for c in text)
    if capitals or all(span["flags"] & _BOLD for span in spans):
        return "###"
    return ""


def _paragraph(lines: list[str]) -> str:
    text = " ".join(join_hyphenated("\n".join(lines)).split())
    if text.startswith(_BULLETS) and len(text) > 1 and text[1] == " ":
        return "- " + text[2:]
    return text


def _number_joined(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The block's lines, a bare section number ("6", "5.2.") joined to the line after it."""
    if len(lines) > 1 and _SECTION_NUMBER.match(_line_text(lines[0]).strip()):
        first, second = lines[0], lines[1]
        spacer = {**first["spans"][-1], "text": " "}
        joined = {**second, "spans": [*first["spans"], spacer, *second["spans"]]}
        return [joined, *lines[2:]]
    return lines


def _block_markdown(block: dict[str, Any], body: float, *, headings: bool = True) -> str:
    lines = [line for line in block["lines"] if _line_text(line).strip()]
    if not lines:
        return ""
    spans = [span for line in lines for span in line["spans"] if span["text"].strip()]
    if all(span["flags"] & _MONOSPACED for span in spans):
        code = "\n".join(_line_text(line).rstrip() for line in lines)
        return f"```\n{code}\n```"
    parts: list[str] = []
    heading: list[str] = []
    level = ""
    prose: list[str] = []
    for line in _number_joined(lines):
        text = " ".join(_line_text(line).split())
        own = [span for span in line["spans"] if span["text"].strip()]
        this = "" if prose or not headings else _heading_level(own, text, body)
        if this and (not heading or this == level) and len(heading) < MAX_HEADING_LINES:
            heading.append(text)
            level = this
            continue
        if heading:
            parts.append(f"{level} {' '.join(heading)}")
            heading = []
            if this:
                heading, level = [text], this
                continue
        prose.append(_line_text(line))
    if heading:
        parts.append(f"{level} {' '.join(heading)}")
    if prose:
        parts.append(_paragraph(prose))
    return "\n\n".join(
        part if not part.startswith("#") or any(c.isalpha() for c in part) else part.lstrip("# ")
        for part in parts
    )


def _tabular(page: Any, blocks: list[dict[str, Any]]) -> bool:
    """Whether lines of the page's body (running head and foot aside) stand side by side
    on :data:`MIN_TABLE_ROWS` rows or more (a table without rules)."""
    boxes = sorted(
        (
            line["bbox"]
            for block in blocks
            for line in block["lines"]
            if _line_text(line).strip() and _in_body(page, line["bbox"])
        ),
        key=lambda box: box[1],
    )
    rows = 0
    for i, first in enumerate(boxes):
        for second in boxes[i + 1 :]:
            if second[1] >= first[3]:
                break
            shared = min(first[3], second[3]) - max(first[1], second[1])
            height = min(first[3] - first[1], second[3] - second[1])
            if shared > 0.5 * height and (second[0] > first[2] or first[0] > second[2]):
                rows += 1
                break
    return rows >= MIN_TABLE_ROWS


class SimplePage(NamedTuple):
    markdown: str
    body: float
    """The font size most of the page's characters are set in (0 without text)."""


def simple_markdown(page: Any, body: float | None = None) -> SimplePage | None:
    """A page without figures, tables or columns as Markdown (see the module), or ``None``
    when its lines turn out to stand side by side (a table without rules: layout's job).

    ``body`` is the document's body font size when known: a title page has no body text.
    """
    blocks = [block for block in page.get_text("dict")["blocks"] if block["type"] == 0]
    if _tabular(page, blocks):
        return None
    own = _body_size(blocks)
    parts = [
        _block_markdown(block, body or own, headings=not _in_margin(page, block["bbox"]))
        for block in blocks
    ]
    return SimplePage("\n\n".join(part for part in parts if part), own)
