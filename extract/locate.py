"""Where a passage's words sit on its page: from the passage's text to the page's word boxes.

The passage is Markdown (a search result's text); the page is its words with their boxes, as
PyMuPDF's ``page.get_text("words")`` gives them (or recognised lines split into words, for a
page read by OCR). Both sides are compared as one run of letters and digits, NFKC-folded and
casefolded, with everything else left out, so the comparison does not see:

* the Markdown markup (``|``, ``**``, ``#``, HTML tags, link targets);
* hyphenation at a line end (``hyphen-`` + ``ation`` is ``hyphenation`` either way);
* ligatures (``ﬁ`` folds to ``fi``), spacing, and Chinese or Japanese text without spaces.

Matching is by stretches the two share (at least :data:`MIN_RUN` characters, found through
:data:`GRAM` -character pieces), wherever each sits, so a passage whose parts the page holds
in another reading order (two columns, a caption first) is still found, while a common
phrase elsewhere on the page is too short to count. Short words between two found ones that
the passage holds too (a table's numbers, read in another order) are taken as well, and so are
the passage's words inside the region it was found in (a table the page holds by columns and
the Markdown by rows, or the other way round). Pure: no PyMuPDF here
(:mod:`extract.page_render` reads the page).
"""

from __future__ import annotations

import itertools
import re
import statistics
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

__all__ = [
    "ANCHOR_RUN",
    "GAP_WORDS",
    "GRAM",
    "MIN_RUN",
    "NEAR_CHARS",
    "REACH_LINES",
    "WORD_SHARE",
    "Box",
    "Located",
    "WordBox",
    "locate",
    "merge_lines",
    "passage_words",
    "rows",
]

GRAM = 6
"""Length in letters and digits of the pieces compared between passage and page."""
MIN_RUN = 24
"""Shortest stretch (in letters and digits) the passage and the page must share, in the same
order, for it to count as the passage's (about five words; a common phrase is shorter),
unless the passage itself is short (then half its length, at least :data:`GRAM`)."""
ANCHOR_RUN = 60
"""A shared stretch this long (about a line of text) places the passage on the page by itself;
shorter ones count only near such an anchor."""
NEAR_CHARS = 120
"""How close (in letters and digits of the page) a shorter shared stretch must be to an anchor."""
REACH_LINES = 1.5
"""How far (in line heights) beyond the passage's region its remaining words are looked for."""
GAP_WORDS = 3
"""Most page words between two covered ones that are filled in when the passage holds them."""
WORD_SHARE = 0.5
"""A word counts as covered when at least this share of its letters and digits is."""

_MARKUP = re.compile(r"<[^<>]*>|\]\([^)]*\)|!\[|<!--.*?-->", re.DOTALL)
"""HTML tags, Markdown link targets and image openers: not words on the page."""


class Box(NamedTuple):
    """A rectangle in page coordinates (points; origin top left)."""

    x0: float
    y0: float
    x1: float
    y1: float


class WordBox(NamedTuple):
    """One word on the page and its box."""

    x0: float
    y0: float
    x1: float
    y1: float
    text: str

    @property
    def box(self) -> Box:
        return Box(self.x0, self.y0, self.x1, self.y1)


@dataclass(frozen=True)
class Located:
    """Where a passage is on a page."""

    words: tuple[int, ...]
    """Indexes of the page words that belong to the passage, in page order."""
    lines: tuple[Box, ...]
    """Their boxes, merged along each line: what to mark."""
    covered: float
    """Share of the passage's words found on the page (0 when none is)."""

    @property
    def found(self) -> bool:
        return bool(self.lines)

    def bounds(self) -> Box | None:
        """The smallest box holding every marked line; None when nothing was found."""
        if not self.lines:
            return None
        return Box(
            min(box.x0 for box in self.lines),
            min(box.y0 for box in self.lines),
            max(box.x1 for box in self.lines),
            max(box.y1 for box in self.lines),
        )


def _fold(text: str) -> str:
    """Letters and digits only, NFKC and casefolded: what both sides are compared as."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(char for char in folded if char.isalnum())


def passage_words(markdown: str) -> list[str]:
    """The passage's words as compared (folded, markup left out; words without a letter or
    digit dropped)."""
    plain = _MARKUP.sub(" ", markdown).replace("|", " ")  # a table's cells are words apart
    words = (_fold(word) for word in plain.split())
    return [word for word in words if word]


def _index(text: str) -> dict[str, list[int]]:
    """Where each :data:`GRAM` -character piece of ``text`` starts."""
    starts: dict[str, list[int]] = {}
    for start in range(len(text) - GRAM + 1):
        starts.setdefault(text[start : start + GRAM], []).append(start)
    return starts


def _shared_runs(text: str, page: str, min_run: int) -> list[tuple[int, int, int]]:
    """``(passage start, page start, length)`` of every stretch ``text`` and ``page`` share
    that is at least ``min_run`` characters long (maximal: neither side extends it)."""
    if len(text) < GRAM or len(page) < GRAM:
        if text and text in page:
            start = page.index(text)
            return [(0, start, len(text))]
        return []
    starts = _index(text)
    runs: list[tuple[int, int, int]] = []
    open_runs: dict[int, int] = {}  # passage start of the gram at page j-1 -> grams in the run
    for j in range(len(page) - GRAM + 1):
        following: dict[int, int] = {}
        for i in starts.get(page[j : j + GRAM], ()):
            following[i] = open_runs.pop(i - 1, 0) + 1
        for i, grams in open_runs.items():
            _keep(runs, i, j - 1, grams, min_run)
        open_runs = following
    for i, grams in open_runs.items():
        _keep(runs, i, len(page) - GRAM, grams, min_run)
    return runs


def _keep(runs: list[tuple[int, int, int]], i: int, j: int, grams: int, min_run: int) -> None:
    """Record the run whose last gram is at passage ``i`` and page ``j``, if long enough."""
    length = grams + GRAM - 1
    if length >= min_run:
        runs.append((i - grams + 1, j - grams + 1, length))


def _anchored(runs: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The runs that belong to the passage's place on the page: every run of at least
    :data:`ANCHOR_RUN` characters, and shorter ones within :data:`NEAR_CHARS` of one of those
    on the page (a short match far from the passage is a phrase it shares with other text).
    Without an anchor (a short passage) the runs are kept."""
    anchors = [(j, j + length) for _, j, length in runs if length >= ANCHOR_RUN]
    if not anchors:
        return runs
    return [
        (i, j, length)
        for i, j, length in runs
        if length >= ANCHOR_RUN
        or any(start - NEAR_CHARS <= j + length and j <= end + NEAR_CHARS for start, end in anchors)
    ]


def _covered_words(spans: Sequence[tuple[int, int]], flags: Sequence[bool]) -> list[bool]:
    return [
        end > start and sum(flags[start:end]) >= WORD_SHARE * (end - start) for start, end in spans
    ]


def _spans(words: Sequence[str]) -> tuple[str, list[tuple[int, int]]]:
    """The words joined, and each one's ``[start, end)`` in the joined text."""
    spans: list[tuple[int, int]] = []
    offset = 0
    for word in words:
        spans.append((offset, offset + len(word)))
        offset += len(word)
    return "".join(words), spans


def locate(passage: str, words: Sequence[WordBox]) -> Located:
    """Where the words of ``passage`` (Markdown) sit among the page's ``words``.

    The page is read in two orders, its own (the order its text was written in, which keeps
    columns apart) and row by row (top to bottom, each row left to right, which is how a
    table's Markdown runs even when the file wrote it column by column); a word found in
    either is the passage's. Returns the page words found, their boxes merged per line, and
    the share of the passage's words found.
    """
    wanted = passage_words(passage)
    text, wanted_spans = _spans(wanted)
    if not text or not words:
        return Located((), (), 0.0)
    folded = [_fold(word.text) for word in words]
    chosen = [False] * len(words)
    found = [False] * len(wanted)
    for order in (list(range(len(words))), rows(words)):
        picked, seen = _match(text, wanted, wanted_spans, [folded[index] for index in order])
        for position, pick in enumerate(picked):
            chosen[order[position]] = chosen[order[position]] or pick
        found = [before or now for before, now in zip(found, seen, strict=True)]
    _fill_region(chosen, found, words, folded, wanted)
    indexes = tuple(index for index, pick in enumerate(chosen) if pick)
    return Located(
        indexes,
        tuple(merge_lines([words[index].box for index in indexes])),
        sum(found) / len(wanted),
    )


def _fill_region(
    chosen: list[bool],
    found: list[bool],
    words: Sequence[WordBox],
    folded: Sequence[str],
    wanted: Sequence[str],
) -> None:
    """Take the words in and next to the region the passage was found in that it holds but
    no order matched (a table read in another order than its Markdown's: by columns, or by
    rows); each passage word not found yet counts once; the region grows by
    :data:`REACH_LINES` line heights at a time while it keeps finding them."""
    picked = [words[index] for index, pick in enumerate(chosen) if pick]
    if not picked or all(found):
        return
    line = statistics.median(word.y1 - word.y0 for word in picked)
    reach = REACH_LINES * line
    x0, y0 = min(word.x0 for word in picked), min(word.y0 for word in picked)
    x1, y1 = max(word.x1 for word in picked), max(word.y1 for word in picked)
    missing: dict[str, list[int]] = {}
    for index, term in enumerate(wanted):
        if not found[index]:
            missing.setdefault(term, []).append(index)
    grew = True
    while grew:
        grew = False
        for index, word in enumerate(words):
            if chosen[index] or not missing.get(folded[index]):
                continue
            middle_x, middle_y = (word.x0 + word.x1) / 2, (word.y0 + word.y1) / 2
            if x0 - reach <= middle_x <= x1 + reach and y0 - reach <= middle_y <= y1 + reach:
                chosen[index] = True
                found[missing[folded[index]].pop(0)] = True
                x0, y0 = min(x0, word.x0), min(y0, word.y0)
                x1, y1 = max(x1, word.x1), max(y1, word.y1)
                grew = True
    held = set(wanted)  # and, inside the region, the passage's words already counted found
    for index, word in enumerate(words):
        middle_x, middle_y = (word.x0 + word.x1) / 2, (word.y0 + word.y1) / 2
        if folded[index] in held and x0 <= middle_x <= x1 and y0 <= middle_y <= y1:
            chosen[index] = True


def _match(
    text: str, wanted: Sequence[str], wanted_spans: Sequence[tuple[int, int]], page: list[str]
) -> tuple[list[bool], list[bool]]:
    """Which of the ``page`` words (in one reading order) are the passage's, and which of the
    passage's words were found."""
    page_text, page_spans = _spans(page)
    page_flags = [False] * len(page_text)
    text_flags = [False] * len(text)
    min_run = min(MIN_RUN, max(GRAM, len(text) // 2))
    for i, j, length in _anchored(_shared_runs(text, page_text, min_run)):
        page_flags[j : j + length] = [True] * length
        text_flags[i : i + length] = [True] * length
    chosen = _covered_words(page_spans, page_flags)
    found = _covered_words(wanted_spans, text_flags)
    _fill_gaps(chosen, page, wanted, found)
    return chosen, found


def rows(words: Sequence[WordBox]) -> list[int]:
    """The words' indexes row by row: top to bottom, each row left to right (a word joins
    the row whose middle its own middle is within half a line of)."""
    ordered = sorted(range(len(words)), key=lambda index: words[index].y0 + words[index].y1)
    lines: list[list[int]] = []
    middle = -1e9
    for index in ordered:
        word = words[index]
        height = max(word.y1 - word.y0, 1e-6)
        centre = (word.y0 + word.y1) / 2
        if lines and abs(centre - middle) <= height / 2:
            lines[-1].append(index)
        else:
            lines.append([index])
            middle = centre
    return [index for line in lines for index in sorted(line, key=lambda i: words[i].x0)]


def _fill_gaps(
    chosen: list[bool], page_words: Sequence[str], wanted: Sequence[str], found: list[bool]
) -> None:
    """Take the words between two chosen ones (at most :data:`GAP_WORDS` apart) that the
    passage holds but no shared run covered: short words and numbers (a table's cells, read
    in another order) too short to make a run of their own. Each passage word is taken once."""
    missing: dict[str, list[int]] = {}
    for index, word in enumerate(wanted):
        if not found[index]:
            missing.setdefault(word, []).append(index)
    picked = [index for index, pick in enumerate(chosen) if pick]
    for before, after in itertools.pairwise(picked):
        if not 1 < after - before <= GAP_WORDS + 1:
            continue
        for index in range(before + 1, after):
            word = page_words[index]
            if not word:
                chosen[index] = True
            elif missing.get(word):
                chosen[index] = True
                found[missing[word].pop(0)] = True


def merge_lines(boxes: Sequence[Box]) -> list[Box]:
    """Word boxes joined into one box per line: neighbours that share most of their height
    and sit close together left to right."""
    merged: list[Box] = []
    for box in boxes:
        if merged:
            last = merged[-1]
            height = max(box.y1 - box.y0, last.y1 - last.y0, 1e-6)
            overlap = min(box.y1, last.y1) - max(box.y0, last.y0)
            close = -height <= box.x0 - last.x1 <= 3 * height
            if overlap >= 0.5 * height and close:
                merged[-1] = Box(
                    min(last.x0, box.x0), min(last.y0, box.y0),
                    max(last.x1, box.x1), max(last.y1, box.y1),
                )  # fmt: skip
                continue
        merged.append(box)
    return merged
