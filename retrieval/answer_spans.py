"""The one or two sentences of a passage that best answer the question.

A hit is a passage of about a thousand characters; a reader (a person in the
panel, a model reading MCP text) should see first the sentence that answers.
Each sentence (a line, or a run ending in ``.``, ``!``, ``?`` or their CJK
forms) scores the idf-weighted share of the question's distinct terms it
holds, in the passage's own language analysis (the terms BM25 matched, so
*concluding* in the text answers *conclude*), idf taken over the passage's own
document. Interrogatives and other words a question is phrased with
(:data:`QUESTION_WORDS`: *how*, *can*, *one*, *per*…) weigh nothing, so they
never pick, nor mark, a sentence. The best sentence is the answer span; a
second joins it when it holds question terms the first lacks.

Spans are ``(start, end)`` character offsets into the hit's ``text``.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections.abc import Collection, Iterator, Mapping, Sequence

from retrieval.shortlist import TermMatrix, lucene_idf
from retrieval.tokenize import ASCII_WORD_CHARS, Tokenizer, is_cjk_run, words_of

Span = tuple[int, int]
MAX_SPANS = 2
SECOND_SPAN_SHARE = 0.2
"""A second sentence joins the first only when it adds this share of the question's
weight (terms the first does not hold)."""

QUESTION_WORDS = frozenset(
    words_of("""
    what which who whom whose when where why how whether
    do does did done can could would should may might must shall will
    one per many much any some also there here very just than
    tell show give list name describe explain
    paper document article report text passage
    quel quelle quels quelles qui quoi quand où pourquoi comment combien
    was welche welcher welches wer wann wo warum wie wieviel
    qué cuál cuáles quién cuándo dónde cómo cuánto cuántos
    quale quali chi quando dove perché come quanto
    """)
)
"""Words a question is phrased with rather than about. They are not BM25 stopwords (a
passage may be about "one-shot" learning), but in a passage they show nothing of the
answer, so they give a sentence no weight. Nor do the words a question names the document
itself with (*paper*, *document*…): every sentence of it is "in the paper"."""

_BOUNDARY_RE = re.compile(r"[.!?]+(?=\s)|[。！？]|\n")
"""Where a sentence ends: sentence punctuation before whitespace, a CJK full stop, a line
end. (A decimal point or the inner dot of "e.g." has no space after it.) The definition;
:func:`_boundaries` finds the same ends faster."""
_BOUNDARY_START_RE = re.compile(r"[.!?。！？\n][.!?]*")
"""A character a boundary can start with, then any sentence punctuation after it: a pattern
that opens with a character set, which the regex engine scans for three times faster than
for ``_BOUNDARY_RE``'s alternatives."""
_ALONE = frozenset("。！？\n")
"""Boundary characters that end a sentence by themselves (:data:`_BOUNDARY_RE`)."""
_TABLE_RULE_RE = re.compile(r"^[\s|:\-+]*$")
"""A Markdown table's separator row, or a line of only rules."""

_ignored_lock = threading.Lock()
_ignored: dict[str, frozenset[str]] = {}


def sentences(text: str) -> list[Span]:
    """The sentences and lines of ``text`` as offsets, surrounding whitespace left out;
    Markdown headings and table rules are not sentences (the hit shows its heading)."""
    spans: list[Span] = []
    start = 0
    for first, last in _boundaries(text):
        newline = text[first] == "\n"
        _add_sentence(spans, text, start, first if newline else last)
        start = last
    _add_sentence(spans, text, start, len(text))
    return spans


def _boundaries(text: str) -> Iterator[Span]:
    """The spans :data:`_BOUNDARY_RE` matches in ``text``, in order."""
    for found in _BOUNDARY_START_RE.finditer(text):
        first, last = found.span()
        if text[first] in _ALONE:
            yield first, first + 1
            first += 1
        if first < last and text[last : last + 1].isspace():  # a run of . ! ? before a space
            yield first, last


def _add_sentence(spans: list[Span], text: str, start: int, end: int) -> None:
    piece = text[start:end]
    stripped = piece.strip()
    if stripped and stripped[0] != "#" and not _TABLE_RULE_RE.match(stripped):
        first = start + len(piece) - len(piece.lstrip())
        spans.append((first, first + len(stripped)))


def ignored_terms(tokenizer: Tokenizer) -> frozenset[str]:
    """The terms :data:`QUESTION_WORDS` become under ``tokenizer`` (computed once each)."""
    with _ignored_lock:
        found = _ignored.get(tokenizer.config)
    if found is None:
        found = frozenset(tokenizer.query_terms(" ".join(sorted(QUESTION_WORDS))))
        with _ignored_lock:
            _ignored[tokenizer.config] = found
    return found


def weighed_terms(tokenizer: Tokenizer, query: str) -> list[str]:
    """The query's distinct terms that can weigh: question words left out."""
    ignored = ignored_terms(tokenizer)
    return [term for term in dict.fromkeys(tokenizer.query_terms(query)) if term not in ignored]


def term_weights(
    tokenizer: Tokenizer, terms: Sequence[str], matrix: TermMatrix
) -> dict[str, float]:
    """Each of ``terms`` (:func:`weighed_terms`) with its idf over the chunks of one document
    (``matrix``); terms the document lacks are left out."""
    weights: dict[str, float] = {}
    for term in terms:
        term_id = tokenizer.term_id(term)
        span = None if term_id is None else matrix.span(term_id)
        if span is not None:
            weights[term] = lucene_idf(span[1] - span[0], matrix.chunk_count)
    return weights


def counted_term_weights(
    terms: Sequence[str], holding: Mapping[str, int], chunk_count: int
) -> dict[str, float]:
    """:func:`term_weights` from how many of the document's ``chunk_count`` chunks hold each
    term (``holding``; a term none holds may be left out), where those counts are stored."""
    return {term: lucene_idf(holding[term], chunk_count) for term in terms if holding.get(term, 0)}


def answer_spans(
    tokenizer: Tokenizer,
    text: str,
    marked: Sequence[str],
    weights: dict[str, float],
    *,
    limit: int = MAX_SPANS,
) -> tuple[Span, ...]:
    """The best sentence of ``text`` for the terms of ``weights`` (and a second that adds what
    it lacks), in text order; ``()`` when no sentence holds any of them.

    ``marked`` are the words of ``text`` that match the query
    (:func:`retrieval.highlights.matched_words`: casefolded words, or CJK bigrams), so only
    their few terms are looked up, never every word of the passage.
    """
    terms = tokenizer.query_terms(" ".join(marked))
    if len(terms) != len(marked):  # one term a marked word, always; else look each up
        terms = [next(iter(tokenizer.query_terms(word)), "") for word in marked]
    wanted = {word: term for word, term in zip(marked, terms, strict=True) if term in weights}
    if not wanted:
        return ()
    spans = sentences(text)
    held: list[set[str]] = []
    if text.isascii():
        held = _held_in_ascii(text.lower(), spans, wanted)
    else:
        cjk = [word for word in wanted if is_cjk_run(word)]
        for start, end in spans:
            words = words_of(text[start:end])
            sentence_terms = {wanted[word] for word in wanted.keys() & set(words)}
            if cjk:
                joined = "".join(word for word in words if is_cjk_run(word))
                sentence_terms.update(wanted[bigram] for bigram in cjk if bigram in joined)
            held.append(sentence_terms)
    chosen = _pick(held, weights, limit)
    return tuple(spans[index] for index in sorted(chosen))


def _held_in_ascii(
    lowered: str, spans: Sequence[Span], wanted: Mapping[str, str]
) -> list[set[str]]:
    """Per sentence of lowercased ASCII text, the terms of ``wanted`` (word -> term) among its
    words: each word's occurrences found by ``str.find`` and placed by the sentence starts,
    rather than every sentence split into words. (A sentence of ASCII text never starts or
    ends inside a word: it is cut after punctuation, at a line end or at the text's end.)"""
    held: list[set[str]] = [set() for _ in spans]
    starts = [start for start, _ in spans]
    size = len(lowered)
    for word, term in wanted.items():
        at = lowered.find(word)
        while at >= 0:
            end = at + len(word)
            whole = (at == 0 or lowered[at - 1] not in ASCII_WORD_CHARS) and (
                end == size or lowered[end] not in ASCII_WORD_CHARS
            )
            sentence = bisect_right(starts, at) - 1
            if whole and sentence >= 0 and end <= spans[sentence][1]:
                held[sentence].add(term)
            at = lowered.find(word, at + 1)
    return held


def _pick(held: Sequence[Collection[str]], weights: dict[str, float], limit: int) -> list[int]:
    """Greedy: the sentence with the most weight, then those adding the most new weight."""
    total = sum(weights.values())
    covered: set[str] = set()
    chosen: list[int] = []
    while len(chosen) < limit:
        best, gain = -1, 0.0
        for index, terms in enumerate(held):
            if index in chosen:
                continue
            added = sum(weights[term] for term in terms if term not in covered)
            if added > gain:
                best, gain = index, added
        if best < 0 or (chosen and gain < SECOND_SPAN_SHARE * total):
            break
        chosen.append(best)
        covered.update(held[best])
    return chosen
