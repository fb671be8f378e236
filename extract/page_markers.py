"""The page marker: the one definition of ``<!-- page N -->`` for every reader and writer.

Extracted Markdown opens each page with a marker line ``<!-- page N -->``
(N 1-based). This module owns that format: :func:`page_marker` writes the
line, :func:`find_page_markers` finds marker lines, :func:`neutralise_page_markers`
disarms look-alikes in uploaded text, and :func:`slice_pages` reads a page
range; :func:`page_at` says which page an offset is on. The extractor, the chunker,
``shortlist tune``'s question sampler, the page-range reader and the MCP tools all use it, so what one of them takes for a page break every other one does too.

A reader accepts a marker line with spaces or tabs around its parts
(``  <!--  page 7 -->``), and a "line" is what :meth:`str.splitlines` says it
is (so ``\\r``, form feeds and U+2028 end lines too). The extractor writes the
canonical form only, and neutralises every line a reader would accept in the
text it was given, so an upload cannot fake a page break.

It lives in ``extract/`` because the extractor is the producer of the format
and ``retrieval/`` its consumer: ``retrieval`` may import from ``extract``
(both stay free of ``service/``), never the reverse. The module itself
imports only :mod:`re` and :mod:`bisect`.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from typing import NamedTuple

__all__ = [
    "PageMarker",
    "find_page_markers",
    "is_page_marker",
    "neutralise_page_markers",
    "page_at",
    "page_marker",
    "slice_pages",
    "without_page_markers",
]

_MARKER = re.compile(r"[ \t]*<!--[ \t]*page[ \t]+(\d+)[ \t]*-->[ \t]*")
"""A whole line that readers take for a page marker (without its line break)."""
_LINE_BREAKS = "\r\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""What :meth:`str.splitlines` ends a line at."""


class PageMarker(NamedTuple):
    start: int
    """Offset of the marker line."""
    end: int
    """Offset just past the marker line and its line break."""
    page: int


def page_marker(page_number: int) -> str:
    """The marker line that opens page ``page_number`` (1-based), without a line break."""
    return f"<!-- page {page_number} -->"


def is_page_marker(line: str) -> bool:
    """Whether ``line`` (one line, with or without its line break) is a page marker."""
    return "<!--" in line and _MARKER.fullmatch(line.rstrip(_LINE_BREAKS)) is not None


def _lines(text: str) -> Iterator[tuple[int, str, str]]:
    """(offset, line with its break, line without it) for every line."""
    position = 0
    for line in text.splitlines(keepends=True):
        yield position, line, line.rstrip(_LINE_BREAKS)
        position += len(line)


def find_page_markers(markdown: str) -> list[PageMarker]:
    """Every page-marker line, in document order."""
    markers: list[PageMarker] = []
    for position, line, content in _lines(markdown):
        if "<!--" in content and (match := _MARKER.fullmatch(content)):
            markers.append(PageMarker(position, position + len(line), int(match[1])))
    return markers


def page_at(markers: Sequence[PageMarker], offset: int) -> int:
    """The page the character at ``offset`` is on, given the text's markers (as
    :func:`find_page_markers` lists them); text before the first marker is page 1."""
    index = bisect_right(markers, offset, key=_marker_start) - 1
    return markers[index].page if index >= 0 else 1


def _marker_start(marker: PageMarker) -> int:
    return marker.start


def neutralise_page_markers(text: str) -> str:
    """``text`` with each line a reader would take for a marker turned into a plain comment.

    ``  <!--  page 7 -->`` becomes ``<!-- (page 7) -->``: still invisible when the
    Markdown is rendered, and never a page break.
    """
    if "<!--" not in text:
        return text
    parts: list[str] = []
    for _, line, content in _lines(text):
        match = _MARKER.fullmatch(content) if "<!--" in content else None
        parts.append(f"<!-- (page {match[1]}) -->{line[len(content) :]}" if match else line)
    return "".join(parts)


def without_page_markers(markdown: str) -> str:
    """The text with its page-marker lines removed (for reading it as prose)."""
    if "<!--" not in markdown:
        return markdown
    return "".join(
        line
        for _, line, content in _lines(markdown)
        if not ("<!--" in content and _MARKER.fullmatch(content))
    )


def slice_pages(markdown: str, first: int, last: int) -> str:
    """The part of page-marked Markdown from page ``first`` through ``last``.

    Markdown without markers is one page. A range whose first page has no marker is empty.
    """
    starts = {marker.page: marker.start for marker in find_page_markers(markdown)}
    if not starts:
        return markdown if first == 1 else ""
    begin = starts.get(first)
    if begin is None:
        return ""
    after = [offset for page, offset in starts.items() if page > last]
    return markdown[begin : min(after) if after else len(markdown)]
