"""Passages that say nearly the same thing: another version of a document, a repeated
boilerplate block, a template sibling.

Two passages are near-copies when the Jaccard similarity of their word
3-shingles (runs of three consecutive words, casefolded, punctuation and
Markdown dropped; each CJK character a word) reaches
:data:`NEAR_COPY_JACCARD`. That is the classic resemblance measure of
Broder's near-duplicate detection, computed exactly: it only ever runs on the
handful of passages a search returns, never on the shortlist or the corpus.

The threshold comes from ``bench/near_duplicates.py`` over the development
corpus (``docs/benchmarks.md``, "Near-duplicate passages"). Distinct passages
that rank together stay at or below 0.44 (pairs among BM25's top 10 for the
development questions: at most 0.41, apart from two real repeats at 0.88 and
1.0; neighbouring passages of one document, including parts of a table that
repeat its header: 0.43; SciFact train top 10: 0.13), while passages of an
edited version of each document (one word in fifty replaced, a sentence added
to every third paragraph) match their original at a median of 0.80, and 0.5
folds 91 % of them (the rest had their chunk boundaries moved, so half of them
is other text). The real repeats in the WHO guideline of the corpus (its
glossary and its recommendations, printed twice) score 0.62 to 0.99.
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Sequence
from typing import NamedTuple

SHINGLE_WORDS = 3
NEAR_COPY_JACCARD = 0.5
"""Passages whose shingle sets overlap at least this much (Jaccard) are near-copies."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_WORD_RE = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_TAG_RE = re.compile(r"</?[a-z][a-z0-9]*\s*/?>")
_ASCII_SEPARATORS = str.maketrans(dict.fromkeys(string.punctuation, " "))


def words(text: str) -> list[str]:
    """``text``'s words, casefolded, without punctuation, Markdown or HTML tags; a CJK
    character is a word.

    ASCII text takes ``str.translate`` and ``split`` (five times cheaper than the regex, and
    the same words: only letters and digits are kept either way); this runs on every hit of
    every search.
    """
    folded = text.casefold()
    if "<" in folded:  # HTML the extractor keeps in tables (<br>, <sup>) is not words
        folded = _TAG_RE.sub(" ", folded)
    if folded.isascii():
        return folded.translate(_ASCII_SEPARATORS).split()
    return _WORD_RE.findall(folded)


def shingles(text: str, *, size: int = SHINGLE_WORDS) -> frozenset[object]:
    """The word ``size``-shingles of ``text`` (its words themselves when fewer)."""
    found = words(text)
    if len(found) < size:
        return frozenset({tuple(found)}) if found else frozenset()
    return frozenset(zip(*(found[i:] for i in range(size)), strict=False))


def jaccard(a: frozenset[object], b: frozenset[object]) -> float:
    """``|a ∩ b| / |a ∪ b|``; 0 when either is empty."""
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


class Folded(NamedTuple):
    """A passage shown in place of others: its position and the near-copies folded into it."""

    position: int
    copies: tuple[tuple[int, float], ...] = ()
    """``(position, similarity)`` of each folded passage, in rank order."""


def collapse(
    order: Sequence[int],
    key: Callable[[int], str],
    text: Callable[[int], str],
    *,
    limit: int,
    threshold: float = NEAR_COPY_JACCARD,
) -> list[Folded]:
    """The first ``limit`` passages of ``order`` that are not near-copies of a better one.

    Walks ``order`` best first; a passage with the same ``key`` as a kept one
    (the identical text) or whose :func:`jaccard` with one reaches
    ``threshold`` is folded into the most similar kept passage instead of being
    shown. Stops once ``limit`` passages are kept, so it reads ``limit`` plus
    the folded passages, nothing more.
    """
    kept: list[Folded] = []
    kept_keys: dict[str, int] = {}
    kept_shingles: list[frozenset[object]] = []
    for position in order:
        if len(kept) >= limit:
            break
        same = kept_keys.get(key(position))
        if same is not None:
            kept[same] = kept[same]._replace(copies=(*kept[same].copies, (position, 1.0)))
            continue
        mine = shingles(text(position))
        best, best_similarity = -1, 0.0
        for slot, theirs in enumerate(kept_shingles):
            smaller, larger = sorted((len(mine), len(theirs)))
            if not larger or smaller < threshold * larger:
                continue  # Jaccard <= smaller / larger: cannot reach the threshold
            similarity = jaccard(mine, theirs)
            if similarity > best_similarity:
                best, best_similarity = slot, similarity
        if best >= 0 and best_similarity >= threshold:
            folded = kept[best]
            kept[best] = folded._replace(copies=(*folded.copies, (position, best_similarity)))
            continue
        kept_keys[key(position)] = len(kept)
        kept_shingles.append(mine)
        kept.append(Folded(position))
    return kept
