"""Where the layout model and the text layer disagree, the text layer's words win.

pymupdf4llm rebuilds a page's words from its layout model's boxes, and sometimes
gets them wrong where the PDF's own text layer has them right: code blocks lose
their spaces ("fz_new_context:Allocatecontextcontaining…"), identifiers drawn
with vector underscores are cut into pieces and struck through
("`fz` ~~`n`~~ `ew`"), table cells glue words. Per page, :func:`reconcile`
measures the Markdown against the text layer (:mod:`extract.fidelity`) and:

1. drops strikethrough, which the layout path infers from lines drawn through
   text (underscores, table rules) and never reliably from the PDF;
2. re-spaces runs of words whose letters are the text layer's letters but
   whose word breaks are not (glued or split words): the run's Markdown is
   replaced by the text layer's own words, the page's structure (headings,
   tables, lists) left as it is;
3. appends the text layer's lines whose words the Markdown lacks altogether (margin
   slugs, sideways labels, white text: what the layout path skips) at the page's end;
4. when the page still keeps fewer than :data:`MIN_RECALL` of the text layer's
   words, or invents more than ``1 - MIN_PRECISION`` of its own, gives up the
   layout for that page: the caller uses its plain rendering and says so.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Literal, NamedTuple

from extract.fidelity import (
    EXTRACTOR_TAG,
    Fidelity,
    compare,
    join_hyphenated,
    markdown_words,
    normalise,
    words,
)

__all__ = [
    "MIN_PRECISION",
    "MIN_RECALL",
    "Reconciled",
    "reconcile",
    "respace",
    "without_strikethrough",
]

MIN_RECALL = 0.95
"""A layout page keeping fewer of the text layer's words than this is rendered plain."""
MIN_PRECISION = 0.95
"""A layout page whose words are in the text layer less often than this is rendered plain."""
_MAX_RUN = 6
"""Most Markdown words :func:`respace` re-spaces at once (a word split into pieces)."""

_STRIKE = re.compile(r"~~(?=\S)(.+?)(?<=\S)~~")
_MASKED = re.compile(
    rf"<!--.*?-->|{EXTRACTOR_TAG.pattern}|\]\([^)\n]*\)", re.DOTALL | re.IGNORECASE
)
_WORD_RUN = re.compile(r"[^\W_]+")
_STYLE_CHARS = "*_~`"
_IGNORED = frozenset(" \t\n*_~`|")

Verdict = Literal["kept", "repaired", "plain"]


class Reconciled(NamedTuple):
    markdown: str
    verdict: Verdict
    fidelity: Fidelity
    """The layout Markdown's fidelity after the repairs (before any plain fallback)."""


class _Token(NamedTuple):
    start: int
    end: int
    word: str


def _tokens(text: str) -> list[_Token]:
    """The words of ``text`` as :func:`extract.fidelity.words` counts them, with offsets.

    Tags, comments and link targets are skipped; a run that NFKC turns into
    several words gives each of them the run's offsets.
    """
    masked = _MASKED.sub(lambda found: " " * len(found.group()), text)
    tokens: list[_Token] = []
    for run in _WORD_RUN.finditer(masked):
        for word in (
            words(run.group()).elements() if _needs_split(run.group()) else [normalise(run.group())]
        ):
            tokens.append(_Token(run.start(), run.end(), word))
    return tokens


def _needs_split(run: str) -> bool:
    """Whether a raw run is more than one word once normalised (CJK, compatibility forms)."""
    return not run.isascii() or not run.isalnum()


def _joinable(markdown: str, start: int, end: int) -> bool:
    """A span that may be replaced: one line (a word the layout cut across two cells of a
    table row is rejoined; the row loses a cell)."""
    span = markdown[start:end]
    return "\n" not in span and "<" not in span


def _same_marks(markdown: str, surface: str) -> bool:
    """Whether a Markdown span and the text layer's words for it carry the same punctuation
    (whitespace, emphasis and cell markup aside): only word breaks may change, never symbols,
    so a formula is not rewritten with a look-alike run from elsewhere on the page."""
    ours, theirs = _marks(markdown), _marks(surface)
    if ours == theirs:
        return True
    # A number the layout printed without its thousands separator ("5050" for "5,050").
    return all(char.isdigit() or not char.isalnum() for char in markdown) and (
        ours.replace(",", "").replace(".", "") == theirs.replace(",", "").replace(".", "")
    )


def _marks(text: str) -> str:
    return "".join(char for char in normalise(text) if not (char.isalnum() or char in _IGNORED))


def _widen(markdown: str, start: int, end: int) -> tuple[int, int]:
    """Grow a span over the style markup hugging it (``~~`n`~~`` loses its backticks too),
    but not over an underscore inside a word (``FZ_STORE``)."""
    left = start
    while left > 0 and markdown[left - 1] in _STYLE_CHARS:
        left -= 1
    if left < start and (left == 0 or not markdown[left - 1].isalnum()):
        start = left
    right = end
    while right < len(markdown) and markdown[right] in _STYLE_CHARS:
        right += 1
    if right > end and (right == len(markdown) or not markdown[right].isalnum()):
        end = right
    return start, end


class _Layer:
    """The text layer's words run together, to find where a glued or split run came from."""

    def __init__(self, text: str) -> None:
        self.text = join_hyphenated(text)
        self.tokens = _tokens(self.text)
        self.vocabulary = {token.word for token in self.tokens}
        self.joined = ""
        self._starts: dict[int, int] = {}
        self._ends: dict[int, int] = {}
        pieces: list[str] = []
        position = 0
        for index, token in enumerate(self.tokens):
            self._starts[position] = index
            pieces.append(token.word)
            position += len(token.word)
            self._ends[position] = index
        self.joined = "".join(pieces)

    def surface(self, letters: str) -> str | None:
        """The text layer's own words for ``letters`` (word breaks aside), if it has them."""
        if len(letters) < 2:
            return None
        found = self.joined.find(letters)
        while found >= 0:
            first, last = self._starts.get(found), self._ends.get(found + len(letters))
            if first is not None and last is not None:
                start, end = self.tokens[first].start, self.tokens[last].end
                return " ".join(self.text[start:end].split())
            found = self.joined.find(letters, found + 1)
        return None


def _replacements(
    markdown: str, ours: list[_Token], layer: _Layer
) -> Iterator[tuple[int, int, str]]:
    """Spans of ``markdown`` whose words are the text layer's with other word breaks.

    Around each word the text layer does not have, the nearest run of Markdown
    words that starts where the layer's words start (the longest such run
    first) and reads as the layer's letters is replaced by the layer's words.
    """
    index = done = 0
    while index < len(ours):
        if ours[index].word in layer.vocabulary:
            index += 1
            continue
        best: tuple[int, int, str] | None = None
        for first in range(index, max(done, index - _MAX_RUN + 1) - 1, -1):
            for last in range(min(len(ours), first + _MAX_RUN) - 1, index - 1, -1):
                start, end = ours[first].start, ours[last].end
                if not _joinable(markdown, start, end):
                    continue
                surface = layer.surface("".join(t.word for t in ours[first : last + 1]))
                if surface is not None and _same_marks(markdown[start:end], surface):
                    best = (start, end, surface)
                    break
            if best is not None:
                break
        if best is None:
            index += 1
            continue
        best = _extend(markdown, ours, layer, best, done)
        start, end = _widen(markdown, best[0], best[1])
        yield start, end, best[2]
        while index < len(ours) and ours[index].start < best[1]:
            index += 1
        done = index


def _extend(
    markdown: str, ours: list[_Token], layer: _Layer, best: tuple[int, int, str], done: int
) -> tuple[int, int, str]:
    """Grow a replacement over neighbours glued to it by punctuation ("context:Allocate"),
    so the text layer's spaces around that punctuation come back too."""
    first = next(i for i, token in enumerate(ours) if token.start == best[0])
    last = next(i for i, token in enumerate(ours) if token.end == best[1])
    while True:
        grown = False
        if first > done and not any(c.isspace() for c in markdown[ours[first - 1].end : best[0]]):
            surface = layer.surface("".join(t.word for t in ours[first - 1 : last + 1]))
            start = ours[first - 1].start
            if (
                surface is not None
                and _joinable(markdown, start, best[1])
                and _same_marks(markdown[start : best[1]], surface)
            ):
                first -= 1
                best, grown = (ours[first].start, best[1], surface), True
        if last + 1 < len(ours) and not any(
            c.isspace() for c in markdown[best[1] : ours[last + 1].start]
        ):
            surface = layer.surface("".join(t.word for t in ours[first : last + 2]))
            end = ours[last + 1].end
            if (
                surface is not None
                and _joinable(markdown, best[0], end)
                and _same_marks(markdown[best[0] : end], surface)
            ):
                last += 1
                best, grown = (best[0], ours[last].end, surface), True
        if not grown:
            return best


def respace(markdown: str, layer: str) -> str:
    """``markdown`` with glued or split words re-spaced as the text layer ``layer`` has them."""
    ours = _tokens(markdown)
    pieces: list[str] = []
    position = 0
    for start, end, surface in _replacements(markdown, ours, _Layer(layer)):
        if start < position:
            continue
        pieces.extend((markdown[position:start], surface))
        position = end
    pieces.append(markdown[position:])
    return "".join(pieces)


def without_strikethrough(markdown: str) -> str:
    """``~~text~~`` becomes ``text``."""
    return _STRIKE.sub(r"\1", markdown) if "~~" in markdown else markdown


def _with_missing(markdown: str, layer: str, reference: Counter[str]) -> str:
    """``markdown`` with the text layer's lines whose words it lacks altogether appended
    (runs of them as one paragraph each): what the layout path skipped, such as margin
    slugs, sideways labels and text drawn in white."""
    spare = reference - markdown_words(markdown)
    if not spare:
        return markdown
    runs: list[list[str]] = []
    previous_missing = False
    for line in join_hyphenated(layer).splitlines():
        own = words(line)
        missing = bool(own) and not own - spare
        if missing:
            spare -= own
            if previous_missing:
                runs[-1].append(line.strip())
            else:
                runs.append([line.strip()])
        previous_missing = missing
    if not runs:
        return markdown
    return "\n\n".join([markdown.rstrip(), *(" ".join(run) for run in runs)])


def reconcile(markdown: str, layer: str) -> Reconciled:
    """The layout Markdown of a page checked and repaired against its text layer ``layer``."""
    reference = words(layer)
    cleaned = without_strikethrough(markdown)
    fidelity = compare(reference, markdown_words(cleaned))
    if fidelity.matched < min(fidelity.reference, fidelity.extracted):
        cleaned = respace(cleaned, layer)
    if fidelity.matched < fidelity.reference:
        cleaned = _with_missing(cleaned, layer, reference)
    if cleaned != markdown:
        fidelity = compare(reference, markdown_words(cleaned))
    verdict: Verdict = "kept" if cleaned == markdown else "repaired"
    if fidelity.recall < MIN_RECALL or fidelity.precision < MIN_PRECISION:
        verdict = "plain"
    return Reconciled(cleaned, verdict, fidelity)
