"""The fast path: pages that need no layout analysis, rendered straight from the text layer.

Most pages of manuals and books are one column of prose, or rows of text side by
side with no rules (field lists, exhibits), which the layout model reads no
differently from the text layer, at about 0.7 CPU-seconds a page.
:func:`needs_layout` decides cheaply, from what PyMuPDF already read, whether a
page may hold something only the model recovers: an image with text over it (a
figure's labels, a background), vector graphics beyond a few rules (table grids,
diagrams; a straight line counts when it is a rule, not an underline or a fraction
bar, and a box drawn as four lines counts once), or columns of text (blocks at
least :data:`COLUMN_SHARE` of the page wide side by side). An image no text
overlaps (a screenshot, a photograph) is not read by the model either (OCR off, it
gives nothing for it), and the running head and foot (the top and bottom
:data:`MARGIN_SHARE` of the page: a title beside a page number) do not count as
text side by side, and a block wholly inside that band is never a heading.

:func:`simple_markdown` then arranges the page from ``page.get_text("dict")``:
blocks in a margin column beside the text (section numbers and titles, marks) are
paragraphs of their own; a list item's label beside its text is part of its
paragraph; rows of lines side by side become tables (:mod:`extract.text_table`);
any other text side by side in the body (a bulleted list set as a table, columns
of prose set line by line) sends the page back to the model. The lines opening a
block are a heading when their font is clearly larger than the body text's (``#``
from :data:`TITLE_RATIO` times the body size, ``##`` from :data:`HEADING_RATIO`,
capitals of small capitals counted), or when they are short, set wholly in bold,
and do not end a sentence (``###``); a block set wholly in a monospaced font is a
code block (its lines and spaces kept), a block opening with a bullet is a list
item, and anything else a paragraph (lines joined, words hyphenated at a line end
rejoined).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from extract import text_table
from extract.fidelity import join_hyphenated
from extract.text_table import (
    LIST_LABEL,
    TextLine,
    TextTable,
    find_tables,
    group_rows,
    table_markdown,
)

__all__ = [
    "COLUMN_SHARE",
    "HEADING_RATIO",
    "MARGIN_NOTE_SHARE",
    "MARGIN_SHARE",
    "MAX_BOLD_HEADING_CHARS",
    "MAX_BOLD_HEADING_LINES",
    "MAX_HEADING_CHARS",
    "MAX_HEADING_LINES",
    "MAX_RULES",
    "MIN_PARAGRAPH_LINES",
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
COLUMN_SHARE = 0.3
"""Text blocks this share of the page wide, side by side, are columns of text (layout's job)."""
MIN_PARAGRAPH_LINES = 3
"""A block of this many lines one below the other is a paragraph, never table rows (columns
of text side by side are layout's job)."""
MARGIN_NOTE_SHARE = 0.25
"""A block at most this share of the page wide, beside the text column, is a margin note."""
MAX_BOLD_HEADING_LINES = 2
MAX_BOLD_HEADING_CHARS = 100

_NUMBERED_CAPITALS = re.compile(r"^\d+(?:\.\d+)*\.? +[^\W\d_][^\W\d_ ]{2,}(?: [^\W\d_]+)*$")
"""A numbered heading in capitals or small capitals ("6 CONCLUSION"): checked for case below."""
_SECTION_NUMBER = re.compile(r"^\d+(?:\.\d+)*\.?$")
_MONOSPACED = 8  # PyMuPDF span flags
_BOLD = 16
_BULLETS = ("•", "●", "▪", "◦", "■", "□", "–", "∙", "·", "-", "*")
_WHITE = (1.0, 1.0, 1.0)
_RULE_THICKNESS = 2.0
_RULE_MIN_LENGTH = 20.0
_UNDERLINE_SHARE = 0.8


def _drawn(page: Any) -> list[tuple[float, float, float, float]]:
    """The boxes of the vector paths that draw something on the page (not white, not
    outside it: crop marks). A straight line's box has no height or no width, so it is
    compared by its coordinates (``Rect.intersects`` is false for an empty rectangle)."""
    x0, y0, x1, y1 = page.rect
    boxes: list[tuple[float, float, float, float]] = []
    for path in page.get_cdrawings():
        box = path.get("rect")
        if box is None or box[2] < x0 or box[0] > x1 or box[3] < y0 or box[1] > y1:
            continue
        colour = path.get("fill") if path.get("type") == "f" else path.get("color")
        if colour is None or tuple(colour) == _WHITE:
            continue
        boxes.append((float(box[0]), float(box[1]), float(box[2]), float(box[3])))
    return boxes


def _visible_paths(page: Any, blocks: Sequence[Sequence[Any]] = ()) -> int:
    """Vector paths that draw something on the page (see :func:`_drawn`), straight lines
    counted as rules only: at least :data:`_RULE_MIN_LENGTH` long (not an underscore or a
    fraction bar), not an underline (inside a text block and shorter than
    :data:`_UNDERLINE_SHARE` of its width), and the four sides of a frame (a box around a
    paragraph) once."""
    text = [block[:4] for block in blocks if block[6] == 0]
    shapes = 0
    across: list[tuple[float, float, float, float]] = []
    down: list[tuple[float, float, float, float]] = []
    for box in _drawn(page):
        width, height = box[2] - box[0], box[3] - box[1]
        if height <= _RULE_THICKNESS and width >= _RULE_MIN_LENGTH:
            if not any(_underlines(box, block) for block in text):
                across.append(box)
        elif width <= _RULE_THICKNESS and height >= _RULE_MIN_LENGTH:
            down.append(box)
        elif height > _RULE_THICKNESS and width > _RULE_THICKNESS:
            shapes += 1
    return shapes + len(across) + len(down) - 3 * _frames(across, down)


def _underlines(rule: Sequence[float], block: Sequence[float]) -> bool:
    """Whether a horizontal rule lies inside a text block (or just under it) and spans less
    than :data:`_UNDERLINE_SHARE` of it: a link's or a word's underline."""
    return (
        block[0] - 1 <= rule[0]
        and rule[2] <= block[2] + 1
        and block[1] <= rule[1] <= block[3] + _RULE_THICKNESS
        and rule[2] - rule[0] < _UNDERLINE_SHARE * (block[2] - block[0])
    )


def _frames(across: Sequence[Sequence[float]], down: Sequence[Sequence[float]]) -> int:
    """Boxes drawn as four lines: two horizontal rules of the same extent joined by two
    vertical ones at their ends."""

    def near(first: float, second: float) -> bool:
        return abs(first - second) <= _RULE_THICKNESS

    count = 0
    for i, top in enumerate(across):
        for bottom in across[i + 1 :]:
            if not (near(top[0], bottom[0]) and near(top[2], bottom[2])):
                continue
            upper, lower = sorted((top[1], bottom[1]))
            sides = [
                side
                for side in down
                if near(side[1], upper)
                and near(side[3], lower)
                and (near(side[0], top[0]) or near(side[0], top[2]))
            ]
            if len(sides) >= 2:
                count += 1
    return count


def _rule_heights(page: Any) -> list[float]:
    """The heights of the horizontal rules drawn on the page (a table built from the text
    layer ends at one)."""
    return [
        (box[1] + box[3]) / 2
        for box in _drawn(page)
        if box[3] - box[1] <= _RULE_THICKNESS and box[2] - box[0] > _RULE_MIN_LENGTH
    ]


def _wide_side_by_side(blocks: Sequence[Sequence[Any]], width: float) -> bool:
    """Whether two text blocks each at least :data:`COLUMN_SHARE` of the page wide share a
    band of the page without overlapping across it (columns of text)."""
    text = [
        b for b in blocks if b[6] == 0 and str(b[4]).strip() and b[2] - b[0] >= COLUMN_SHARE * width
    ]
    for i, first in enumerate(text):
        for second in text[i + 1 :]:
            if _beside(first, second):
                return True
    return False


def _beside(first: Sequence[float], second: Sequence[float]) -> bool:
    """Whether two boxes share a band of the page, one left of the other."""
    shared = float(min(first[3], second[3]) - max(first[1], second[1]))
    return shared > 2 and bool(second[0] >= first[2] - 1 or first[0] >= second[2] - 1)


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
        or _wide_side_by_side(body, float(page.rect.width))
        or _visible_paths(page, blocks) > MAX_RULES
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


def _small_capitals(spans: list[dict[str, Any]], text: str) -> float:
    """The capitals' size of a line set in small capitals ("REFERENCES", its initial
    larger than the rest), else 0."""
    letters = [c for c in text if c.isalpha()]
    if len(spans) < 2 or not letters or not all(c.isupper() for c in letters):
        return 0.0  # (CJK letters are neither upper nor lower case)
    sizes = [round(span["size"], 1) for span in spans if span["text"].strip()]
    return max(sizes) if len(set(sizes)) == 2 else 0.0


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
    if body and _small_capitals(spans, text) >= HEADING_RATIO * body:
        return "##"
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


class SimplePage(NamedTuple):
    markdown: str
    body: float
    """The font size most of the page's characters are set in (0 without text)."""


def _text_lines(blocks: list[dict[str, Any]]) -> list[list[TextLine]]:
    return [
        [
            TextLine(index, number, tuple(line["bbox"]), tuple(line["spans"]))
            for number, line in enumerate(block["lines"])
            if _line_text(line).strip()
        ]
        for index, block in enumerate(blocks)
    ]


def _hanging_label(lines: Sequence[TextLine]) -> bool:
    """Whether a block is a paragraph opening with a label of its own on the first line
    ("(1)", "a.", a bullet), its other lines below the text: a list item, not a table row."""
    rows = group_rows(lines)
    return (
        bool(rows)
        and len(rows[0].lines) == 2
        and LIST_LABEL.match(rows[0].lines[0].text.strip()) is not None
        and all(len(row.lines) == 1 for row in rows[1:])
    )


def _stacked(lines: Sequence[TextLine]) -> bool:
    """Whether a block's lines stand one below the other (none side by side)."""
    return all(len(row.lines) == 1 for row in group_rows(lines))


def _margin_notes(page: Any, blocks: list[dict[str, Any]], lines: list[list[TextLine]]) -> set[int]:
    """Blocks in a margin column beside the text column (section numbers and titles set
    left of their text, marks in the right margin): narrow, stacked, horizontal (a
    sideways stamp is layout's), and wholly left or right of every block of the body at
    least half the page wide."""
    width = float(page.rect.width)
    wide = [
        block["bbox"]
        for block in blocks
        if block["bbox"][2] - block["bbox"][0] >= width / 2 and _in_body(page, block["bbox"])
    ]
    if not wide:
        return set()
    left, right = min(box[0] for box in wide), max(box[2] for box in wide)
    return {
        index
        for index, block in enumerate(blocks)
        if lines[index]
        and block["bbox"][2] - block["bbox"][0] <= MARGIN_NOTE_SHARE * width
        and (block["bbox"][2] < left or block["bbox"][0] > right)
        and _stacked(lines[index])
        and all(tuple(line["dir"]) == (1.0, 0.0) for line in block["lines"])
    }


class _Arrangement(NamedTuple):
    tables: list[TextTable]
    held: dict[tuple[int, int], int]
    """(block, line) to the table holding that line."""


def _arrange(page: Any, blocks: list[dict[str, Any]]) -> _Arrangement | None:
    """The page's rule-less tables (:mod:`extract.text_table`), or ``None`` when text side
    by side in its body is neither a table, margin notes nor a list item's label (a code
    listing's columns are not table cells: such a page stays with the model)."""
    lines = _text_lines(blocks)
    notes = _margin_notes(page, blocks, lines)
    prose = {
        index
        for index, own in enumerate(lines)
        if _hanging_label(own) or (len(own) >= MIN_PARAGRAPH_LINES and _stacked(own))
    }
    code = {
        index
        for index, own in enumerate(lines)
        if own and all(span["flags"] & _MONOSPACED for line in own for span in line.spans)
    }
    skipped = notes | prose | code
    candidates = [line for index, own in enumerate(lines) if index not in skipped for line in own]
    top, height = float(page.rect.y0), float(page.rect.height)
    body = (top + MARGIN_SHARE * height, top + (1 - MARGIN_SHARE) * height)
    tables = find_tables(candidates, float(page.rect.width), body, _rule_heights(page))
    if tables is None:
        return None
    held = {
        (line.block, line.number): number
        for number, table in enumerate(tables)
        for line in table.lines
    }
    apart = notes | {block for block, _ in held}
    rest = [
        blocks[index]["bbox"]
        for index, own in enumerate(lines)
        if own and index not in apart and _in_body(page, blocks[index]["bbox"])
    ]
    if any(_beside(first, second) for i, first in enumerate(rest) for second in rest[i + 1 :]):
        return None
    loose = [
        line
        for line in [*candidates, *(line for index in code for line in lines[index])]
        if (line.block, line.number) not in held and _in_body(page, line.bbox)
    ]
    if sum(row.side_by_side for row in group_rows(loose)) >= text_table.MIN_TABLE_ROWS:
        return None
    return _Arrangement(tables, held)


def simple_markdown(page: Any, body: float | None = None) -> SimplePage | None:
    """A page without figures or columns as Markdown (see the module), its rule-less
    tables built from the text layer, or ``None`` when its lines stand side by side in a
    way that is no such table (layout's job).

    ``body`` is the document's body font size when known: a title page has no body text.
    """
    blocks = [block for block in page.get_text("dict")["blocks"] if block["type"] == 0]
    arrangement = _arrange(page, blocks)
    if arrangement is None:
        return None
    own = _body_size(blocks)
    parts: list[str] = []
    emitted: set[int] = set()
    for index, block in enumerate(blocks):
        rest = []
        for number, line in enumerate(block["lines"]):
            table = arrangement.held.get((index, number))
            if table is None:
                rest.append(line)
            elif table not in emitted:
                emitted.add(table)
                parts.append(table_markdown(arrangement.tables[table]))
        if rest:
            part = {**block, "lines": rest}
            parts.append(
                _block_markdown(part, body or own, headings=not _in_margin(page, part["bbox"]))
            )
    return SimplePage("\n\n".join(part for part in parts if part), own)
