"""One search: validate the query, shortlist with BM25, rerank, cite."""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from retrieval.answer_spans import (
    MAX_SPANS,
    answer_spans,
    counted_term_weights,
    sentences,
    term_weights,
    weighed_terms,
)
from retrieval.citations import hit, near_copy, no_match_note, sources
from retrieval.comparison import balance_sides, comparison_sides
from retrieval.document_questions import (
    SECTION_DOCUMENTS,
    DocumentQuestion,
    answering_sections,
    answers,
    document_question,
)
from retrieval.errors import EmptyQuery, InvalidSearchParameter, QueryTooLong
from retrieval.highlights import WordMarker
from retrieval.language import detect_language
from retrieval.near_duplicates import collapse
from retrieval.noise import demotion, look_alikes, thin_demotion, thinness
from retrieval.relevance import SECTION_RELEVANCE, clamp, insufficient_evidence, lexical_relevance
from retrieval.rerankers.base import CrossLingualReranker
from retrieval.shortlist import (
    DEFAULT_KEEP,
    DEFAULT_MAX_CANDIDATES,
    shortlist,
    term_coverage,
)
from retrieval.types import (
    AcrossLanguages,
    Candidate,
    Chunk,
    DocumentRef,
    Hit,
    Prefiltered,
    RerankResult,
    SearchResult,
    Shortlist,
    ShortlistEntry,
    Source,
    SourceDocument,
    StageSeconds,
)

if TYPE_CHECKING:
    from retrieval.index import CachedDocument, ChunkIndex
    from retrieval.rerankers.base import Reranker

MAX_QUERY_CHARS = 2000
DEFAULT_TOP_K = 8
DEFAULT_RERANK_TIMEOUT = 10.0

NO_TEXT_WARNING = "the searched documents contain no text"


def unsearched_warning(count: int) -> str:
    """Said when some passages in other languages than the question's have no multilingual
    vector yet, so a page there that answers may be missing from the results."""
    passages = "passage" if count == 1 else "passages"
    return (
        f"{count} {passages} in other languages than the question's not searched yet "
        "(still warming)"
    )


def validate_query(query: str) -> str:
    """The query without surrounding whitespace; raises if empty or too long."""
    stripped = query.strip()
    if not stripped:
        raise EmptyQuery()
    if len(stripped) > MAX_QUERY_CHARS:
        raise QueryTooLong(len(stripped), MAX_QUERY_CHARS)
    return stripped


def search(
    index: ChunkIndex,
    query: str,
    refs: Sequence[DocumentRef],
    *,
    reranker: Reranker,
    top_k: int = DEFAULT_TOP_K,
    keep: int = DEFAULT_KEEP,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
    rerank_timeout: float = DEFAULT_RERANK_TIMEOUT,
    documents: Iterable[SourceDocument] = (),
    prefiltered: Prefiltered | None = None,
    languages: Mapping[str, str] | None = None,
) -> SearchResult:
    """The ``top_k`` best passages of ``refs`` for ``query``, with their sources.

    Every ref must be in ``index`` or among ``documents`` (the Markdown of the
    refs :meth:`ChunkIndex.missing` named); otherwise this raises
    :class:`~retrieval.errors.DocumentNotIndexed`. Reranker failures do not
    raise: they come back as ``reranked=False`` and a warning.

    With ``prefiltered`` (BM25's shortlist over a whole project, scored elsewhere with the
    same analysis and statistics), ``refs`` need only be its passages' documents: they are
    the candidates, and everything after the shortlist runs as usual, on documents that are
    only chunked (:meth:`ChunkIndex.chunked_documents`): a passage's figures are worked out for
    the candidates alone, and a term matrix only for the documents of the hits shown (their
    answer spans) or of a comparison's candidates. ``languages`` are the known written
    languages of ``documents`` (:meth:`ChunkIndex.documents`).
    """
    documents = tuple(documents)
    searched = functools.partial(
        _search,
        index,
        query,
        refs,
        reranker=reranker,
        top_k=top_k,
        keep=keep,
        max_candidates=max_candidates,
        rerank_timeout=rerank_timeout,
        documents=documents,
        prefiltered=prefiltered,
        languages=languages,
    )
    first, found = searched(without_evidence=None)
    if not first.insufficient_evidence or all(m.margin >= found.margin for m in found.matches):
        return first
    # Nothing found in the question's language is evidence, so the answer is likelier to be on a
    # page in another language: passages there that stand out less join the result too. Ranked
    # anew rather than added, so that they never move the other passages' scores in a search
    # that has evidence (they would: a candidate changes every fused score's normalisation).
    second, _ = searched(without_evidence=found)
    return second._replace(
        stage_seconds=StageSeconds(
            *(a + b for a, b in zip(first.stage_seconds, second.stage_seconds, strict=True))
        )
    )


def _search(
    index: ChunkIndex,
    query: str,
    refs: Sequence[DocumentRef],
    *,
    reranker: Reranker,
    top_k: int,
    keep: int,
    max_candidates: int,
    rerank_timeout: float,
    documents: Iterable[SourceDocument],
    prefiltered: Prefiltered | None,
    languages: Mapping[str, str] | None,
    without_evidence: AcrossLanguages | None,
) -> tuple[SearchResult, AcrossLanguages]:
    """:func:`search`'s result, and what the reranker found across languages for it (see
    :func:`_with_cross_lingual`, which takes ``without_evidence``)."""
    query = validate_query(query)
    _check_positive(top_k=top_k, keep=keep, max_candidates=max_candidates)
    if not rerank_timeout > 0:
        raise InvalidSearchParameter("rerank_timeout", rerank_timeout, "must be above 0 seconds")
    started = time.perf_counter()
    indexed: Sequence[CachedDocument]
    if prefiltered is None:
        whole = index.documents(refs, add=documents, languages=languages)
        indexed = whole
        chunked = time.perf_counter()
        query_terms, term_ids, unknown_terms = index.query_terms(query, indexed)
        picked = shortlist(
            term_ids,
            index.searched_terms(whole),
            keep=keep,
            max_candidates=max_candidates,
            unknown_terms=unknown_terms,
        )
    else:
        indexed = index.chunked_documents(refs, add=documents, languages=languages)
        chunked = time.perf_counter()
        query_terms = index.query_terms(query, indexed).terms
        picked = _from_prefilter(indexed, prefiltered, min(keep, max_candidates))
    asked = document_question(query)
    sections: dict[int, tuple[int, int]] = {}
    if asked is not None:
        picked, sections = _with_sections(index, indexed, picked, asked)
    picked, crossed, found = _with_cross_lingual(
        reranker, index, query, indexed, picked, without_evidence=without_evidence
    )
    shortlisted = time.perf_counter()
    chunks = _CandidateChunks(indexed, picked.entries)
    candidates = [
        Candidate(
            *indexed[entry.document].reader_passage(entry.ordinal), entry.bm25, entry.coverage
        )
        for entry in picked.entries
    ]
    reranked = _rerank(reranker, query, candidates, time.monotonic() + rerank_timeout)
    stages = StageSeconds(
        chunk=chunked - started,
        bm25=shortlisted - chunked,
        rerank=time.perf_counter() - shortlisted,
    )
    order, scores, warnings = _final_order(reranker.name, reranked, candidates)
    ran_clean = reranked.reranked and not warnings
    unscored = set(reranked.unscored) if ran_clean else set(range(len(candidates)))
    # A passage that shares no query word and that the reranker did not score is filler, not an
    # answer: shown only when a query word (BM25), the reranker, a section question or the
    # multilingual model put it forward. With no word matched and no score, nothing is shown
    # (and the warning says so).
    order = [
        i
        for i in order
        if candidates[i].bm25 > 0 or i in sections or i in crossed or i not in unscored
    ]
    by_reranker = any(i not in unscored and candidates[i].bm25 == 0 for i in order)
    relevance = _relevance(reranked, candidates)
    densities = [
        indexed[entry.document].reference_density_of(entry.ordinal) for entry in picked.entries
    ]
    lengths = _stored_lengths(prefiltered)
    thin = thinness(
        [
            indexed[entry.document].content_terms_of(
                entry.ordinal, lengths.get((indexed[entry.document].ref.id, entry.ordinal))
            )
            for entry in picked.entries
        ]
    )
    order, scores, relevance = _demote(order, scores, relevance, densities, thin)
    if reranked.bm25_anchor and ran_clean:
        first = _bm25_first(order, candidates, densities, thin)
        order = _anchored(order, first, reranked.bm25_anchor)
    if sections and asked is not None:
        order = sorted(order, key=lambda i: sections.get(i, (len(order), 0)))
        relevance = [
            max(value, SECTION_RELEVANCE)
            if i in sections and answers(asked, sections[i][1])
            else value
            for i, value in enumerate(relevance)
        ]
    if crossed:
        order = _placed_across_languages(order, crossed, found.place)
    sides = comparison_sides(query)
    if sides is not None and candidates:
        order = _balance(index, indexed, picked, order, sides)
    shown = collapse(order, chunks.key, chunks.text, limit=top_k)
    spans = _AnswerSpans(
        index, indexed, query, sections, prefiltered.term_passages if prefiltered else {}
    )
    marker = _Marker(index, query)
    marked = {
        item.position: marker(
            indexed[picked.entries[item.position].document].language, chunks[item.position]
        )
        for item in shown
    }
    hits: list[Hit] = [
        hit(
            chunks[item.position],
            _ref(indexed, picked, item.position),
            score=scores[item.position],
            bm25=candidates[item.position].bm25,
            relevance=relevance[item.position],
            matched_words=marked[item.position],
            near_copies=tuple(
                near_copy(chunks[i], _ref(indexed, picked, i), similarity)
                for i, similarity in item.copies
            ),
            answer_spans=spans(
                item.position,
                picked.entries[item.position].document,
                chunks.text(item.position),
                marked[item.position],
            ),
        )
        for item in shown
    ]
    result = SearchResult(
        hits=hits,
        sources=_with_look_alikes(sources(hits), indexed, picked, chunks.key),
        reranker=reranker.name,
        reranked=reranked.reranked and not warnings,
        warnings=(
            *_shortlist_warnings(
                picked,
                query_terms,
                bool(indexed),
                reranker=reranker.name if by_reranker else None,
                shown=bool(hits),
            ),
            *reranked.warnings,
            *warnings,
            *((unsearched_warning(found.unsearched),) if found.unsearched else ()),
        ),
        candidates=len(candidates),
        unscored=len(reranked.unscored),
        exhaustive=picked.exhaustive,
        no_term_matched=picked.no_term_matched,
        insufficient_evidence=insufficient_evidence([item.relevance for item in hits]),
        stage_seconds=stages,
    )
    return result, found


class _CandidateChunks:
    """The candidates' chunks by position: their keys and texts read from the cached columns,
    a whole :class:`Chunk` made only for those asked for (the hits and their near-copies)."""

    def __init__(
        self, indexed: Sequence[CachedDocument], entries: Sequence[ShortlistEntry]
    ) -> None:
        self._indexed, self._entries = indexed, entries
        self._made: dict[int, Chunk] = {}

    def __getitem__(self, position: int) -> Chunk:
        found = self._made.get(position)
        if found is None:
            entry = self._entries[position]
            found = self._made[position] = self._indexed[entry.document].chunks[entry.ordinal]
        return found

    def key(self, position: int) -> str:
        entry = self._entries[position]
        return self._indexed[entry.document].chunks.keys[entry.ordinal]

    def text(self, position: int) -> str:
        entry = self._entries[position]
        return self._indexed[entry.document].chunks.texts[entry.ordinal]


class _Marker:
    """The words of each hit a reader should see marked, in its document's own language
    (:class:`retrieval.highlights.WordMarker`, one per language, so a word is analysed once
    per search)."""

    def __init__(self, index: ChunkIndex, query: str) -> None:
        self._index, self._query = index, query
        self._markers: dict[str, WordMarker] = {}

    def __call__(self, language: str, chunk: Chunk) -> tuple[str, ...]:
        marker = self._markers.get(language)
        if marker is None:
            marker = self._markers[language] = WordMarker(
                self._index.tokenizer_for(language),
                self._index.language_query_terms(self._query, language),
            )
        return marker(chunk.text)


class _AnswerSpans:
    """Each hit's answer spans, with the query's term weights worked out once per document
    (from the prefilter's counts where it gave them: ``term_passages``).

    A passage of a section answering a document-level question answers it whole: without a
    sentence holding the question's words, its opening sentences are the spans."""

    def __init__(
        self,
        index: ChunkIndex,
        indexed: Sequence[CachedDocument],
        query: str,
        sections: Container[int],
        term_passages: Mapping[str, Mapping[str, int]],
    ) -> None:
        self._index, self._indexed, self._query = index, indexed, query
        self._sections, self._term_passages = sections, term_passages
        self._weights: dict[int, dict[str, float]] = {}
        self._terms: dict[str, list[str]] = {}

    def __call__(
        self, position: int, document: int, text: str, marked: Sequence[str]
    ) -> tuple[tuple[int, int], ...]:
        indexed = self._indexed[document]
        tokenizer = self._index.tokenizer_for(indexed.language)
        weights = self._weights.get(document)
        if weights is None:
            terms = self._terms.get(indexed.language)
            if terms is None:
                terms = self._terms[indexed.language] = weighed_terms(tokenizer, self._query)
            counted = self._term_passages.get(indexed.ref.id)
            if counted is None:  # not stored: its whole term matrix has the counts
                weights = term_weights(tokenizer, terms, self._index.whole(indexed).terms)
            else:
                weights = counted_term_weights(terms, counted, len(indexed.chunks))
            self._weights[document] = weights
        found = answer_spans(tokenizer, text, marked, weights)
        if not found and position in self._sections:
            return tuple(sentences(text)[:MAX_SPANS])
        return found


def _with_sections(
    index: ChunkIndex,
    indexed: Sequence[CachedDocument],
    picked: Shortlist,
    asked: DocumentQuestion,
) -> tuple[Shortlist, dict[int, tuple[int, int]]]:
    """The shortlist with the passages of the sections answering a document-level question
    (:mod:`retrieval.document_questions`) of its first documents, and for each such
    candidate position its sort key: (document's place, section rank)."""
    documents = list(dict.fromkeys(entry.document for entry in picked.entries))
    if not documents:
        documents = list(range(len(indexed)))
    position = {(entry.document, entry.ordinal): n for n, entry in enumerate(picked.entries)}
    entries = list(picked.entries)
    sections: dict[int, tuple[int, int]] = {}
    for place, document in enumerate(documents[:SECTION_DOCUMENTS]):
        doc = indexed[document]
        tokenizer = index.tokenizer_for(doc.language)
        headings = list(doc.chunks.headings)
        for ordinal, rank in answering_sections(asked, tokenizer, headings).items():
            at = position.get((document, ordinal))
            if at is None:
                at = len(entries)
                entries.append(ShortlistEntry(document, ordinal, 0.0, 0.0))
            sections[at] = (place, rank)
    return picked._replace(entries=entries), sections


def _with_cross_lingual(
    reranker: Reranker,
    index: ChunkIndex,
    query: str,
    indexed: Sequence[CachedDocument],
    picked: Shortlist,
    *,
    without_evidence: AcrossLanguages | None,
) -> tuple[Shortlist, dict[int, float], AcrossLanguages]:
    """The shortlist with the passages the reranker's multilingual model found in documents
    written in another language than the query's and than the default one (BM25 cannot find
    them: its terms are the query's words), each such candidate position's margin, and what the
    reranker found. Those standing less than its margin out
    (:attr:`~retrieval.types.AcrossLanguages.margin`) are left out; ``without_evidence`` is what
    it found for a first ranking of this search that had no evidence in the question's
    language: then every one of them joins, and the reranker is not asked again. Only the
    searched documents are looked at: with the prefilter (#28), those BM25 found."""
    nothing = AcrossLanguages()
    if not isinstance(reranker, CrossLingualReranker):
        return picked, {}, nothing
    other = [document for document, doc in enumerate(indexed) if index.in_other_language(doc)]
    if not other:  # a project in the default language alone: nothing to look at
        return picked, {}, nothing
    asked_in = detect_language(query) or index.tokenizer.language
    places = [
        (document, n)
        for document in other
        if indexed[document].written_in != asked_in
        for n in range(len(indexed[document].chunks))
    ]
    if not places:
        return picked, {}, nothing
    found = without_evidence or reranker.cross_lingual(
        query,
        [indexed[document].reader_keys[n] for document, n in places],
        lambda n: indexed[places[n][0]].reader_text(places[n][1]),
    )
    matches = [
        match
        for match in found.matches
        if without_evidence is not None or match.margin >= found.margin
    ]
    position = {(entry.document, entry.ordinal): n for n, entry in enumerate(picked.entries)}
    entries = list(picked.entries)
    crossed: dict[int, float] = {}
    for match in matches:
        document, ordinal = places[match.position]
        at = position.get((document, ordinal))
        if at is None:
            at = len(entries)
            entries.append(ShortlistEntry(document, ordinal, 0.0, 0.0))
        crossed[at] = match.margin
    return picked._replace(entries=entries), crossed, found


def _placed_across_languages(
    order: list[int], crossed: Mapping[int, float], place: int
) -> list[int]:
    """``order`` with the passages found across languages moved up to ``place`` and below,
    best margin first; one already higher stays where it is."""
    above = order[: place - 1]
    moved = [i for i in sorted(crossed, key=lambda i: -crossed[i]) if i not in above]
    rest = [i for i in order if i not in moved]
    return [*rest[: place - 1], *moved, *rest[place - 1 :]]


def _from_prefilter(
    indexed: Sequence[CachedDocument], prefiltered: Prefiltered, limit: int
) -> Shortlist:
    """The shortlist a prefilter worked out, as positions among ``indexed``; a passage whose
    document is not among them, or past its chunks, is left out."""
    position = {doc.ref.id: n for n, doc in enumerate(indexed)}
    entries = [
        ShortlistEntry(position[found.document_id], found.ordinal, found.bm25, found.coverage)
        for found in prefiltered.passages
        if found.document_id in position
        and found.ordinal < len(indexed[position[found.document_id]].chunks)
    ][:limit]
    return Shortlist(
        entries=entries,
        total=prefiltered.total,
        exhaustive=len(entries) == prefiltered.total,
        no_term_matched=prefiltered.total > 0 and not entries,
    )


def _stored_lengths(prefiltered: Prefiltered | None) -> dict[tuple[str, int], int]:
    """Each prefiltered passage's length, by (document id, ordinal), where it came with one."""
    if prefiltered is None:
        return {}
    return {
        (found.document_id, found.ordinal): found.length
        for found in prefiltered.passages
        if found.length is not None
    }


def _ref(indexed: Sequence[CachedDocument], picked: Shortlist, position: int) -> DocumentRef:
    """The document of the candidate at ``position``."""
    return indexed[picked.entries[position].document].ref


def _balance(
    index: ChunkIndex,
    indexed: Sequence[CachedDocument],
    picked: Shortlist,
    order: list[int],
    sides: tuple[str, str],
) -> list[int]:
    """A comparison's ranking with its two sides taking turns
    (:func:`retrieval.comparison.balance_sides`), each side's coverage over the searched
    documents' term matrices."""
    whole = [index.whole(doc) for doc in indexed]
    matrices = index.searched_terms(whole)
    offsets = [0]
    for doc in whole:
        offsets.append(offsets[-1] + doc.terms.chunk_count)
    positions = [offsets[entry.document] + entry.ordinal for entry in picked.entries]
    coverage = []
    for side in sides:
        _, ids, unknown = index.query_terms(side, indexed)
        side_coverage = term_coverage(ids, matrices, unknown_terms=unknown)
        coverage.append([float(side_coverage[position]) for position in positions])
    return balance_sides(order, coverage[0], coverage[1])


def _with_look_alikes(
    cited: list[Source],
    indexed: Sequence[CachedDocument],
    picked: Shortlist,
    key_of: Callable[[int], str],
) -> list[Source]:
    """The sources, each naming the searched documents that share most of its passages."""
    if len(indexed) < 2 or not cited:
        return cited
    candidate_keys: dict[str, set[str]] = {}
    candidates: dict[str, CachedDocument] = {}  # a look-alike is among them: its copies score
    for position, entry in enumerate(picked.entries):
        document = candidates.setdefault(indexed[entry.document].ref.id, indexed[entry.document])
        candidate_keys.setdefault(document.ref.id, set()).add(key_of(position))
    refs = {id_: doc.ref for id_, doc in candidates.items()}
    found = look_alikes(
        [source.id for source in cited],
        candidate_keys,
        lambda id_: frozenset(candidates[id_].chunks.keys),
    )
    return [
        source._replace(look_alikes=tuple(refs[other] for other in found[source.id]))
        if source.id in found
        else source
        for source in cited
    ]


def _demote(
    order: list[int],
    scores: list[float],
    relevance: list[float],
    densities: Sequence[float],
    thin: Sequence[float],
) -> tuple[list[int], list[float], list[float]]:
    """Scores lowered in proportion to each passage's citation density
    (:func:`retrieval.noise.citation_density`) and thinness (:func:`retrieval.noise.thinness`),
    relevance for the density only, and the order re-sorted to match."""
    if not any(densities) and not any(thin):
        return order, scores, relevance
    references = [demotion(density) for density in densities]
    factors = [f * thin_demotion(t) for f, t in zip(references, thin, strict=True)]
    scores = [score - (1.0 - f) * abs(score) for score, f in zip(scores, factors, strict=True)]
    relevance = [value * f for value, f in zip(relevance, references, strict=True)]
    keys = [-math.inf if math.isnan(score) else score for score in scores]
    position = {index: rank for rank, index in enumerate(order)}
    return sorted(order, key=lambda i: (-keys[i], position[i])), scores, relevance


def _bm25_first(
    order: Sequence[int],
    candidates: Sequence[Candidate],
    densities: Sequence[float],
    thin: Sequence[float],
) -> int | None:
    """The candidate of ``order`` that BM25 alone would put first, after the same demotion."""
    if not order:
        return None
    bm25 = [candidate.bm25 for candidate in candidates]
    by_bm25 = sorted(order, key=lambda i: (-bm25[i], i))
    demoted, _, _ = _demote(by_bm25, bm25, [0.0] * len(candidates), densities, thin)
    return demoted[0]


def _anchored(order: list[int], first: int | None, places: int) -> list[int]:
    """``order`` with ``first`` moved up to place ``places`` when it ranks lower."""
    if first is None or first in order[:places]:
        return order
    rest = [i for i in order if i != first]
    return [*rest[: places - 1], first, *rest[places - 1 :]]


def _relevance(result: RerankResult, candidates: Sequence[Candidate]) -> list[float]:
    """Each candidate's absolute relevance: the reranker's own when it gave one per
    candidate, else the lexical estimate from query-term coverage."""
    if len(result.relevance) == len(candidates):
        return [clamp(value) for value in result.relevance]
    return [lexical_relevance(candidate.coverage) for candidate in candidates]


def _rerank(
    reranker: Reranker, query: str, candidates: Sequence[Candidate], deadline: float
) -> RerankResult:
    """The reranker's answer; a reranker that raises (a bug) is reported, not fatal."""
    if not candidates:
        return RerankResult(scores=[], reranked=False)
    try:
        return reranker.rerank(query, candidates, deadline=deadline)
    except Exception as error:  # the protocol says never raise; keep the search alive if one does
        return RerankResult(
            scores=[candidate.bm25 for candidate in candidates],
            reranked=False,
            unscored=tuple(range(len(candidates))),
            warnings=(
                f"{reranker.name}: failed ({type(error).__name__}: {error}); using BM25 order",
            ),
        )


def _check_positive(**values: int) -> None:
    for name, value in values.items():
        if value < 1:
            raise InvalidSearchParameter(name, value, "must be at least 1")


def _final_order(
    name: str, result: RerankResult, candidates: Sequence[Candidate]
) -> tuple[list[int], list[float], tuple[str, ...]]:
    """Candidate positions best first, the score to report for each, and any warning.

    Reranked: by the reranker's scores, ties by BM25 then chunk (= shortlist)
    order. Not reranked, or scores that break the protocol: shortlist order
    with BM25 scores.
    """
    bm25 = [candidate.bm25 for candidate in candidates]
    if len(result.scores) != len(candidates):
        warning = (
            f"{name}: returned {len(result.scores)} scores for {len(candidates)} passages; "
            "using BM25 order"
        )
        return list(range(len(candidates))), bm25, (warning,)
    if not result.reranked:
        return list(range(len(candidates))), bm25, ()
    keys = [-math.inf if math.isnan(score) else score for score in result.scores]
    order = sorted(range(len(candidates)), key=lambda i: (-keys[i], -bm25[i], i))
    return order, list(result.scores), ()


def _shortlist_warnings(
    picked: Shortlist,
    query_terms: Sequence[str],
    any_documents: bool,
    *,
    reranker: str | None,
    shown: bool,
) -> tuple[str, ...]:
    if not any_documents:
        return ()
    if picked.total == 0:
        return (NO_TEXT_WARNING,)
    if not picked.no_term_matched:
        return ()
    warning = no_match_note(reranker, shown=shown, query_has_words=bool(query_terms))
    if shown and not picked.exhaustive:
        warning += f"; only the first {len(picked.entries)} of {picked.total} passages were read"
    return (warning,)
