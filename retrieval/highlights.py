"""The words of a passage a reader should see marked for a query.

They are the words whose BM25 terms the query has, found with the very analysis the shortlist
scored with (folding, stopwords, stemming, CJK bigrams): a client marking them never marks a
stopword the scorer ignored, and never misses an inflection it matched ("tracing" for "traces").
"""

from __future__ import annotations

from collections.abc import Collection

from retrieval.tokenize import Tokenizer, cjk_terms, is_cjk_run, words_of

MAX_MARKED_WORDS = 64
"""Enough for any passage a person reads; bounds the response of a query of many words."""


def matched_words(tokenizer: Tokenizer, text: str, query_terms: Collection[str]) -> tuple[str, ...]:
    """Distinct words (casefolded) of ``text`` that match one of ``query_terms``, in order.

    A CJK run contributes the bigrams (or the single character) the query asked for, since its
    script has no word boundaries to mark whole words by.
    """
    wanted = set(query_terms)
    if not wanted:
        return ()
    found: dict[str, None] = {}
    for word in dict.fromkeys(words_of(text)):
        if is_cjk_run(word):
            found.update(dict.fromkeys(t for t in cjk_terms(word, unigrams=True) if t in wanted))
        elif any(term in wanted for term in tokenizer.query_terms(word)):
            found[word] = None
        if len(found) >= MAX_MARKED_WORDS:
            break
    return tuple(found)[:MAX_MARKED_WORDS]
