"""The words of a passage a reader should see marked for a query.

They are the words whose BM25 terms the query has, found with the very analysis the shortlist
scored with (folding, stopwords, stemming, CJK bigrams): a client marking them never marks a
stopword the scorer ignored, and never misses an inflection it matched ("tracing" for "traces").
"""

from __future__ import annotations

from collections.abc import Collection
from itertools import compress, filterfalse

from retrieval.tokenize import Tokenizer, cjk_terms, is_cjk_run, words_and_cjk

MAX_MARKED_WORDS = 64
"""Enough for any passage a person reads; bounds the response of a query of many words."""


class WordMarker:
    """:func:`matched_words` for one query, over as many passages as a search shows.

    Each distinct word is analysed once (in one stemmer call per passage, for the words not
    seen before) and its verdict remembered, so the passages of one search, which share most
    of their words, cost a dictionary look-up per word rather than an analysis.
    """

    def __init__(self, tokenizer: Tokenizer, query_terms: Collection[str]) -> None:
        self._tokenizer = tokenizer
        self._wanted = frozenset(query_terms)
        self._matches: dict[str, bool] = {}
        """word -> whether its term is one of the query's."""

    def __call__(self, text: str) -> tuple[str, ...]:
        """Distinct words (casefolded) of ``text`` that match one of the query's terms, in order.

        A CJK run contributes the bigrams (or the single character) the query asked for, since
        its script has no word boundaries to mark whole words by.
        """
        wanted = self._wanted
        if not wanted:
            return ()
        found_words, has_cjk = words_and_cjk(text)
        words = list(dict.fromkeys(found_words))
        self._learn(words, has_cjk)
        matches = self._matches
        if not has_cjk:
            return tuple(compress(words, map(matches.__getitem__, words)))[:MAX_MARKED_WORDS]
        found: dict[str, None] = {}
        for word in words:
            if is_cjk_run(word):
                found.update(
                    dict.fromkeys(t for t in cjk_terms(word, unigrams=True) if t in wanted)
                )
            elif matches[word]:
                found[word] = None
            if len(found) >= MAX_MARKED_WORDS:
                break
        return tuple(found)[:MAX_MARKED_WORDS]

    def _learn(self, words: list[str], has_cjk: bool) -> None:
        matches = self._matches
        new = list(filterfalse(matches.__contains__, words))
        if has_cjk:
            new = [word for word in new if not is_cjk_run(word)]
        if new:
            terms = self._tokenizer.word_terms(new)
            matches.update(zip(new, map(self._wanted.__contains__, terms), strict=True))


def matched_words(tokenizer: Tokenizer, text: str, query_terms: Collection[str]) -> tuple[str, ...]:
    """:class:`WordMarker`'s answer for one passage."""
    return WordMarker(tokenizer, query_terms)(text)
