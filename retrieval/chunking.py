"""Split page-marked Markdown into passages along its structure.

The extractor starts every page with a line ``<!-- page N -->``
(:mod:`extract.page_markers` owns the format). Those lines are not chunk text;
they only tell which pages a chunk touches.

Blocks (paragraphs and lists, tables, fenced code) are packed into chunks of
about ``chunk_size`` characters. A heading starts a new chunk (a run of
headings with nothing between stays together) and every chunk carries its
heading breadcrumb; headings always stay with the block after them, even
if that makes the chunk exceed ``chunk_size`` by their length. A block too
big for one chunk is split:

* a table between rows, each part after the first repeating the header and
  separator rows;
* a paragraph or list at list items, then sentences, then words; a single
  word longer than ``chunk_size`` is cut (the only mid-word cut);
* a fenced code block stays whole up to ``CODE_BLOCK_FACTOR * chunk_size``,
  then splits at lines.

A chunk's ``[start, end)`` span points into the document Markdown; its text is
that slice without page-marker lines (plus the repeated header of a continued
table). Output depends on the Markdown and ``chunk_size`` only, so ids
``"{document_id}:{ordinal}"`` are stable; bump :data:`CHUNKER_VERSION` whenever
the output for the same input changes, since it is part of cache keys.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from bisect import bisect_left
from collections.abc import Sequence
from typing import NamedTuple

from extract.page_markers import PageMarker, find_page_markers, is_page_marker, page_at
from retrieval.types import Chunk, PassageBounds, passage_text

CHUNKER_VERSION = 3
DEFAULT_CHUNK_SIZE = 1200
CODE_BLOCK_FACTOR = 4
"""A fenced code block up to this many times ``chunk_size`` is never split."""

_HEADING_RE = re.compile(r" {0,3}(#{1,6})[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*")
_FENCE_RE = re.compile(r" {0,3}(`{3,}|~{3,})")
_TABLE_ROW_RE = re.compile(r"[ \t]{0,3}\|")
_TABLE_SEPARATOR_RE = re.compile(r"[ \t]*\|?(?:[ \t]*:?-+:?[ \t]*\|)+[ \t]*(?::?-+:?[ \t]*)?")
_LIST_ITEM_RE = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+\S")
_SENTENCE_BREAK_RE = re.compile(r"([.!?。！？][\"'’”)\]」』）]*)(\s*)")
"""A sentence end and the space after it; ``.!?`` end a sentence only before a space."""
_WORD_RE = re.compile(r"\S+")


class _Block(NamedTuple):
    kind: str
    """``"heading"``, ``"text"``, ``"table"`` or ``"code"``."""
    start: int
    end: int
    level: int = 0
    title: str = ""
    lines: tuple[tuple[int, int], ...] = ()
    """Line spans, kept for tables and text blocks."""


class _Piece(NamedTuple):
    """A unit the packer places whole: a block, or a part of an oversized one."""

    start: int
    end: int
    prefix: str = ""
    """Text placed before the span (a continued table's header); forces a new chunk."""
    solo: bool = False
    """An oversized code block: a chunk of its own."""


def chunk_markdown(
    document_id: str, markdown: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE
) -> list[Chunk]:
    """Split one document's Markdown into ordered, non-overlapping chunks."""
    return chunks_from_layout(document_id, markdown, chunk_layout(markdown, chunk_size=chunk_size))


def chunk_layout(markdown: str, *, chunk_size: int = DEFAULT_CHUNK_SIZE) -> list[PassageBounds]:
    """Where :func:`chunk_markdown`'s chunks lie, in order: the part of chunking that reads
    the Markdown's structure, which a layout stored with a document's terms spares a search
    (``lexical_documents.passage_layout``)."""
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")
    markers = find_page_markers(markdown)
    marker_starts = [marker.start for marker in markers]
    layout: list[PassageBounds] = []
    for start, end, prefix, heading in _pack(
        _pieces(markdown, _parse_blocks(markdown), chunk_size), chunk_size, marker_starts
    ):
        first, last = page_at(markers, start), page_at(markers, end - 1)
        layout.append(
            PassageBounds(start, end, min(first, last), max(first, last), heading, prefix)
        )
    return layout


def chunks_from_layout(
    document_id: str, markdown: str, layout: Sequence[PassageBounds]
) -> list[Chunk]:
    """The chunks of ``markdown`` that ``layout`` places (:func:`chunk_layout`'s, for the same
    Markdown and chunk size): each span without its page-marker lines, after its prefix.
    Raises ``ValueError`` for a layout that cannot be this Markdown's (a span out of order or
    past its end)."""
    markers: list[PageMarker] | None = None
    marker_starts: list[int] = []
    chunks: list[Chunk] = []
    position = 0
    for ordinal, (start, end, first, last, heading, prefix) in enumerate(layout):
        if not position <= start < end <= len(markdown) or first > last:
            raise ValueError(f"passage {ordinal} of {document_id} does not fit its Markdown")
        position = end
        text = markdown[start:end]
        if "<!--" in text:
            if markers is None:
                markers = find_page_markers(markdown)
                marker_starts = [marker.start for marker in markers]
            text = _without_markers(markdown, start, end, markers, marker_starts)
        text = prefix + text
        chunks.append(
            Chunk(
                id=f"{document_id}:{ordinal}",
                document_id=document_id,
                ordinal=ordinal,
                text=text,
                heading=heading,
                start=start,
                end=end,
                pages=(first, last),
                key=hashlib.sha256(passage_text(heading, text).encode()).hexdigest(),
            )
        )
    return chunks


def _without_markers(
    markdown: str, start: int, end: int, markers: list[PageMarker], marker_starts: list[int]
) -> str:
    parts: list[str] = []
    position = start
    for marker in markers[bisect_left(marker_starts, start) :]:
        if marker.start >= end:
            break
        parts.append(markdown[position : marker.start])
        position = min(marker.end, end)
    parts.append(markdown[position:end])
    return "".join(parts)


def _parse_blocks(markdown: str) -> list[_Block]:
    """Headings, fenced code, tables and text blocks (blank or marker lines separate them)."""
    blocks: list[_Block] = []
    lines: list[tuple[int, int]] = []
    lines_are_table = False

    def flush() -> None:
        nonlocal lines
        if lines:
            kind = "table" if lines_are_table else "text"
            blocks.append(_Block(kind, lines[0][0], lines[-1][1], lines=tuple(lines)))
            lines = []

    raw_lines = markdown.splitlines(keepends=True)
    offsets: list[int] = []
    position = 0
    for raw in raw_lines:
        offsets.append(position)
        position += len(raw)

    index = 0
    while index < len(raw_lines):
        start = offsets[index]
        content = raw_lines[index].rstrip("\r\n")
        end = start + len(content)
        index += 1
        stripped = content.lstrip()
        if not stripped or is_page_marker(content):
            flush()
            continue
        first = stripped[0]
        if first == "#" and (heading := _HEADING_RE.fullmatch(content)):
            flush()
            title = heading.group(2).strip().strip("*_").strip()
            if title:
                blocks.append(_Block("heading", start, end, len(heading.group(1)), title))
                continue
        if first in "`~" and (fence := _FENCE_RE.match(content)):
            flush()
            index, end = _consume_fence(raw_lines, offsets, index, fence.group(1), end)
            blocks.append(_Block("code", start, end))
            continue
        is_table_row = first == "|" and _TABLE_ROW_RE.match(content) is not None
        if lines and is_table_row != lines_are_table:
            flush()
        if not lines:
            lines_are_table = is_table_row
        lines.append((start, end))
    flush()
    return blocks


def _consume_fence(
    raw_lines: list[str], offsets: list[int], index: int, opener: str, end: int
) -> tuple[int, int]:
    """Skip to the line closing a fence; return the next line index and the block's end."""
    closer = re.compile(rf" {{0,3}}{re.escape(opener[0])}{{{len(opener)},}}[ \t]*")
    while index < len(raw_lines):
        content = raw_lines[index].rstrip("\r\n")
        if content.strip():
            end = offsets[index] + len(content)
        index += 1
        if closer.fullmatch(content):
            break
    return index, end


def _pieces(markdown: str, blocks: list[_Block], chunk_size: int) -> list[_Block | _Piece]:
    """Blocks that fit, and the parts of those that do not."""
    pieces: list[_Block | _Piece] = []
    for block in blocks:
        size = block.end - block.start
        if block.kind == "heading" or size <= chunk_size:
            pieces.append(block)
        elif block.kind == "code":
            if size <= CODE_BLOCK_FACTOR * chunk_size:
                pieces.append(_Piece(block.start, block.end, solo=True))
            else:
                pieces.extend(_split_code(markdown, block, chunk_size))
        elif block.kind == "table":
            pieces.extend(_split_table(markdown, block, chunk_size))
        else:
            pieces.extend(_split_text(markdown, block, chunk_size))
    return pieces


def _split_table(markdown: str, block: _Block, chunk_size: int) -> list[_Piece]:
    """Row-aligned parts; every part after the first repeats the header and separator."""
    rows = block.lines
    has_header = len(rows) >= 2 and bool(
        _TABLE_SEPARATOR_RE.fullmatch(markdown, rows[1][0], rows[1][1])
    )
    header = markdown[rows[0][0] : rows[1][1]] + "\n" if has_header else ""
    pieces: list[_Piece] = []
    part: tuple[int, int] | None = None
    for row_start, row_end in rows:
        prefix = header if pieces else ""
        if part is not None:
            if len(prefix) + row_end - part[0] <= chunk_size:
                part = (part[0], row_end)
                continue
            pieces.append(_Piece(part[0], part[1], prefix))
            part, prefix = None, header
        if len(prefix) + row_end - row_start > chunk_size:
            pieces.extend(_split_words(markdown, row_start, row_end, chunk_size))
        else:
            part = (row_start, row_end)
    if part is not None:
        pieces.append(_Piece(part[0], part[1], header if pieces else ""))
    return pieces


def _split_text(markdown: str, block: _Block, chunk_size: int) -> list[_Piece]:
    """List items, then sentences, then words (only a word longer than a chunk is cut)."""
    items: list[tuple[int, int]] = []
    for line_start, line_end in block.lines:
        if not items or _LIST_ITEM_RE.match(markdown, line_start, line_end):
            items.append((line_start, line_end))
        else:
            items[-1] = (items[-1][0], line_end)
    pieces: list[_Piece] = []
    for item_start, item_end in (_trim(markdown, *item) for item in items):
        if item_end - item_start <= chunk_size:
            pieces.append(_Piece(item_start, item_end))
            continue
        for sentence_start, sentence_end in _sentences(markdown, item_start, item_end):
            if sentence_end - sentence_start <= chunk_size:
                pieces.append(_Piece(sentence_start, sentence_end))
            else:
                pieces.extend(_split_words(markdown, sentence_start, sentence_end, chunk_size))
    return pieces


def _sentences(markdown: str, start: int, end: int) -> list[tuple[int, int]]:
    """Sentences of a trimmed span: each ends at its punctuation; the space between is left out."""
    spans: list[tuple[int, int]] = []
    position = start
    for match in _SENTENCE_BREAK_RE.finditer(markdown, start, end):
        if match.end() < end and (match.group(2) or match.group(1)[0] in "。！？"):
            spans.append((position, match.end(1)))
            position = match.end()
    spans.append((position, end))
    return spans


def _split_code(markdown: str, block: _Block, chunk_size: int) -> list[_Piece]:
    """An overlong code block, at lines (page-marker lines dropped, long lines at words)."""
    pieces: list[_Piece] = []
    position = block.start
    for line in markdown[block.start : block.end].splitlines(keepends=True):
        line_start, line_end = _trim(markdown, position, position + len(line))
        position += len(line)
        if line_start >= line_end or is_page_marker(markdown[line_start:line_end]):
            continue
        if line_end - line_start <= chunk_size:
            pieces.append(_Piece(line_start, line_end))
        else:
            pieces.extend(_split_words(markdown, line_start, line_end, chunk_size))
    return pieces


def _split_words(markdown: str, start: int, end: int, chunk_size: int) -> list[_Piece]:
    """Greedy runs of whole words; a single word longer than ``chunk_size`` is cut."""
    pieces: list[_Piece] = []
    run_start: int | None = None
    run_end = start
    for word in _WORD_RE.finditer(markdown, start, end):
        word_start, word_end = word.span()
        if run_start is not None and word_end - run_start <= chunk_size:
            run_end = word_end
            continue
        if run_start is not None:
            pieces.append(_Piece(run_start, run_end))
        while word_end - word_start > chunk_size:
            pieces.append(_Piece(word_start, word_start + chunk_size))
            word_start += chunk_size
        run_start, run_end = word_start, word_end
    if run_start is not None:
        pieces.append(_Piece(run_start, run_end))
    return pieces


def _trim(markdown: str, start: int, end: int) -> tuple[int, int]:
    while start < end and markdown[start].isspace():
        start += 1
    while end > start and markdown[end - 1].isspace():
        end -= 1
    return start, end


def _pack(
    pieces: list[_Block | _Piece], chunk_size: int, page_starts: list[int]
) -> list[tuple[int, int, str, str]]:
    """Greedily fill chunks; returns ``(start, end, prefix, breadcrumb)`` per chunk.

    A page boundary always ends a chunk, so a passage cites exactly the pages
    it comes from: a sentence found on page 7 is never cited as "pp. 6-7"
    just because the end of page 6 fitted in the same budget.
    """
    chunks: list[tuple[int, int, str, str]] = []
    breadcrumb: list[tuple[int, str]] = []
    start: int | None = None
    end = 0
    prefix = ""
    only_headings = False

    def flush() -> None:
        nonlocal start
        if start is not None:
            heading = " > ".join(title for _, title in breadcrumb)
            chunks.append((start, end, prefix, heading))
            start = None

    for piece in pieces:
        if isinstance(piece, _Block) and piece.kind == "heading":
            if start is not None and not (only_headings and piece.end - start <= chunk_size):
                flush()
            while breadcrumb and breadcrumb[-1][0] >= piece.level:
                breadcrumb.pop()
            breadcrumb.append((piece.level, piece.title))
            if start is None:
                start, prefix, only_headings = piece.start, "", True
            end = piece.end
            continue
        piece_prefix = piece.prefix if isinstance(piece, _Piece) else ""
        solo = isinstance(piece, _Piece) and piece.solo
        new_page = bisect.bisect_right(page_starts, piece.start) > bisect.bisect_right(
            page_starts, end
        )
        if start is not None and (
            piece_prefix
            or (new_page and not only_headings)
            or (not only_headings and (solo or len(prefix) + piece.end - start > chunk_size))
        ):
            flush()
        if start is None:
            start, prefix = piece.start, piece_prefix
        end = piece.end
        only_headings = False
        if solo:
            flush()
    flush()
    return chunks
