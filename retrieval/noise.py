"""Passages that match a query without answering it: reference lists and duplicates.

* :func:`citation_density` scores how much a passage reads like a
  bibliography: the share of its lines (or, in one long line, its sentences)
  that look like a reference entry, plus a bonus when its heading is
  "References" or "Bibliography". Reference lists repeat the topic's words
  (paper titles) without saying anything, so BM25 and embeddings both like
  them; the pipeline demotes a passage by :data:`REFERENCE_DEMOTION` in
  proportion to this density. The signal is the citation-density heuristic
  used by Nexla's document server, written from its description.
* :func:`thinness` scores how little a passage says: a page number, a running
  header, a heading with one line under it. Such a passage matches a query's
  words as well as the paragraph that answers it (BM25 favours short
  passages; an embedding of a few words is close to a query of a few words)
  without holding an answer; among candidates most of which have
  :data:`THIN_TERMS` terms or more, the pipeline demotes a passage of fewer by up
  to :data:`THIN_DEMOTION`, in proportion to how far below it is. Chosen on the development set's tuning fold (#25:
  ``THIN_TERMS`` 8, 15, 25, 40, 60 and demotion 0.3, 0.5, 0.9 tried; 40 and
  0.5 gave the most, hit@1 0.631 -> 0.656 and hit@3 0.828 -> 0.844, three and two
  questions gained, one lost, BM25 alone unchanged).
* :func:`look_alikes` names the documents that share most of their passages
  with another (another version, a template sibling), from exact passage
  keys: it finds candidates cheaply among the query's own shortlist, then
  checks the whole documents.
"""

from __future__ import annotations

import functools
import re
import statistics
from collections.abc import Callable, Mapping, Sequence

REFERENCE_DEMOTION = 0.5
"""A passage that is all references keeps this share of its score and relevance."""
THIN_TERMS = 40
"""A passage whose own text has fewer terms than this (stopwords aside) is thin."""
THIN_DEMOTION = 0.5
"""A passage with no terms of its own keeps this share of its score (relevance is untouched:
the verdict's floor was fitted without it)."""
LOOK_ALIKE_SHARE = 0.5
"""Two documents look alike when this share of the smaller one's passages is in both."""

_REFERENCE_HEADING_RE = re.compile(
    r"\b(references|bibliography|works cited|literature cited|références|bibliographie|"
    r"literatur|literaturverzeichnis|referencias|bibliografía|bibliografia|参考文献)\b",
    re.IGNORECASE,
)
_YEAR_RE = re.compile(r"(?:1(?<!\w1)[89]|2(?<!\w2)0)\d{2}[a-z]?\b")
"""A year from 1800 to 2099 that starts a word ("2019", "2019a"). The word boundary before it is
a look-behind after its first digit: a pattern that opens with an assertion is tried at every
character, one that opens with a digit only where the text has a 1 or a 2 (3x faster)."""
_ENTRY_START_RE = re.compile(r"\s*(?:[-*]\s+)?(?:\[\d{1,3}\]|\d{1,3}\.\s|\(\d{1,3}\))")
"""A numbered entry's start, "[12]", "12." or "(12)", matched at the text's start only."""
_ENTRY_NAMES_RE = re.compile(
    r"[A-Z](?<!\w[A-Z])[a-zà-ÿ'-]+,\s(?:[A-Z]\.\s?){1,3}"  # Surname, A. B.
    r"|[A-Z][a-zà-ÿ'-]+,\s(?:[A-Z][a-zà-ÿ'-]+,\s)+(?:and\s)?[A-Z]"  # Ahn, Choi, and Bengio
)
_ENTRY_WORDS = (
    "doi", "arxiv", "isbn", "issn", "pp.", "vol.", "proc.", "proceedings", "journal",
    "conference", "workshop", "transactions", "press", "publisher",
)  # fmt: skip
"""Words of a publication's details, in any letter case."""
_ENTRY_WORD_RE = re.compile(r"(?i:\b(?:" + "|".join(map(re.escape, _ENTRY_WORDS)) + r")\b)")
_CASED_APART = ("ı", "İ", "ſ")
"""Letters the pattern's case-insensitive matching takes for an entry word's i or s that
lower-casing does not turn into that one letter (dotless and dotted I, long s)."""
_ADDRESSES = ("http://", "https://", "www.")


def _entry_sign(text: str) -> bool:
    """Whether ``text`` shows a sign of a reference entry besides a year: a numbered start, an
    author's name, a publication word or a web address (an in-text citation, "(Lee et al.,
    2019)", shows only the year). The cheaper tests come first; a text with a year and no
    other sign, the common case in a paper's prose, pays for each of them."""
    return bool(
        _ENTRY_START_RE.match(text)
        or any(address in text for address in _ADDRESSES)
        or _ENTRY_NAMES_RE.search(text)
        or (_may_hold_entry_word(text) and _ENTRY_WORD_RE.search(text))
    )


def _may_hold_entry_word(text: str) -> bool:
    """False only when :data:`_ENTRY_WORD_RE` cannot match: no entry word in the lower-cased
    text, nor a letter it would take for one. A substring search is 10x cheaper than the
    pattern, which tries every alternative at every word of a paper's prose."""
    lowered = text.lower()
    return any(word in lowered for word in _ENTRY_WORDS) or any(
        letter in text for letter in _CASED_APART
    )


_MIN_PIECE_CHARS = 25
_MIN_PIECES = 3
"""One or two citation-like sentences are not a reference list."""


def citation_density(text: str, heading: str = "") -> float:
    """How much of ``text`` reads like a reference list, in [0, 1]."""
    heading_says = bool(heading) and _REFERENCE_HEADING_RE.search(heading.rsplit(">", 1)[-1])
    if not heading_says and not (_YEAR_RE.search(text) and _entry_sign(text)):
        return 0.0  # the common case, decided in one or two scans
    pieces = [line for line in text.splitlines() if len(line.strip()) >= _MIN_PIECE_CHARS]
    if len(pieces) <= 2:  # one long paragraph: look at its sentence-sized pieces
        pieces = [p for p in re.split(r"(?<=[.;])\s+(?=\[?\d|[A-Z])", text) if p.strip()]
    if not pieces:
        return 0.0
    entries = sum(1 for piece in pieces if _YEAR_RE.search(piece) and _entry_sign(piece))
    density = entries / max(len(pieces), _MIN_PIECES)
    if heading_says:
        density = max(density, 0.5) + 0.25
    return min(1.0, density)


def demotion(density: float) -> float:
    """The factor a passage's score and relevance are multiplied by."""
    return 1.0 - REFERENCE_DEMOTION * min(1.0, max(0.0, density))


def thinness(terms: Sequence[int]) -> list[float]:
    """How thin each of the passages with ``terms`` terms of their own is, in [0, 1]: 0 from
    :data:`THIN_TERMS` up, and 0 for all when most of them are shorter (a spreadsheet's rows,
    a short note: short is how those documents are, not a sign of saying nothing)."""
    if not terms or statistics.median(terms) < THIN_TERMS:
        return [0.0] * len(terms)
    return [max(0.0, 1.0 - count / THIN_TERMS) for count in terms]


def thin_demotion(thin: float) -> float:
    """The factor a thin passage's score is multiplied by."""
    return 1.0 - THIN_DEMOTION * min(1.0, max(0.0, thin))


def look_alikes(
    hit_documents: Sequence[str],
    candidate_keys: Mapping[str, set[str]],
    document_keys: Callable[[str], frozenset[str]],
    *,
    share: float = LOOK_ALIKE_SHARE,
) -> dict[str, tuple[str, ...]]:
    """For each hit document, the other documents that share most of its passages.

    ``candidate_keys`` maps each document to the passage keys it has among the
    query's candidates (where a look-alike shows up, since its copies of the
    matching passages score the same); ``document_keys`` gives each of those
    documents' passage keys, all of them (asked only for the hits' documents and
    their suspects, each once). Two documents look alike when at least
    ``share`` of the smaller one's passages are in both.
    """
    keys_of = functools.cache(document_keys)
    owners: dict[str, set[str]] = {}
    for document, keys in candidate_keys.items():
        for key in keys:
            owners.setdefault(key, set()).add(document)
    found: dict[str, tuple[str, ...]] = {}
    for document in dict.fromkeys(hit_documents):
        mine = keys_of(document)
        suspects = {
            other
            for key in candidate_keys.get(document, ())
            for other in owners.get(key, ())
            if other != document
        }
        alike = []
        for other in sorted(suspects):
            theirs = keys_of(other)
            smaller = min(len(mine), len(theirs))
            if smaller and len(mine & theirs) >= share * smaller:
                alike.append(other)
        if alike:
            found[document] = tuple(alike)
    return found
