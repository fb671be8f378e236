from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence

import pytest

import retrieval
from retrieval.citations import no_match_note
from retrieval.errors import DocumentNotIndexed, EmptyQuery, InvalidSearchParameter, QueryTooLong
from retrieval.index import ChunkIndex
from retrieval.pipeline import MAX_QUERY_CHARS, search
from retrieval.rerankers.local import LocalReranker
from retrieval.rerankers.none import NoReranker
from retrieval.types import Candidate, RerankResult, SourceDocument

FRUIT = SourceDocument(
    "fruit",
    "Fruit.pdf",
    "h1",
    "<!-- page 1 -->\n# Apples\n\nApples are crisp. Apple pie uses apples.\n\n"
    "<!-- page 2 -->\n# Pears\n\nPears are soft. An apple is not a pear.\n\n"
    "<!-- page 3 -->\n# Plums\n\nPlums are purple and have one apple-sized stone.\n",
)
TREES = SourceDocument(
    "trees",
    "Trees.docx",
    "h2",
    "<!-- page 1 -->\n# Orchards\n\nApple trees grow in orchards.\n\n"
    "<!-- page 2 -->\n# Forests\n\nOaks grow in forests.\n",
)


class ScoringReranker:
    """Scores each candidate with a function of its text, like a model would."""

    name = "test"

    def __init__(self, score: Callable[[Candidate], float]) -> None:
        self.score = score
        self.calls: list[tuple[str, list[Candidate], float]] = []

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        self.calls.append((query, list(candidates), deadline))
        return RerankResult(scores=[self.score(c) for c in candidates], reranked=True)


class AnchoredReranker(ScoringReranker):
    """Scores like :class:`ScoringReranker` and asks to keep BM25's first within ``places``."""

    def __init__(self, score: Callable[[Candidate], float], places: int) -> None:
        super().__init__(score)
        self.places = places

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        scored = super().rerank(query, candidates, deadline=deadline)
        return scored._replace(bm25_anchor=self.places)


class UnavailableReranker:
    """A reranker whose model is down: BM25 order, reranked=False, a warning."""

    name = "down"

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        return RerankResult(
            scores=[c.bm25 for c in candidates],
            reranked=False,
            unscored=tuple(range(len(candidates))),
            warnings=("down: HTTP 503, gave up after 2 retries",),
        )


class WrongLengthReranker:
    name = "broken"

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        return RerankResult(scores=[1.0], reranked=True)


class RaisingReranker:
    name = "buggy"

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        raise RuntimeError("model file missing")


def bm25_only() -> ScoringReranker:
    return ScoringReranker(lambda candidate: candidate.bm25)


@pytest.fixture
def index() -> ChunkIndex:
    built = ChunkIndex(chunk_size=80)
    built.add([FRUIT, TREES])
    return built


REFS = [FRUIT.ref, TREES.ref]


def test_hits_follow_the_rerankers_scores(index: ChunkIndex) -> None:
    prefers_pears = ScoringReranker(lambda c: 1.0 if "pear" in c.text.lower() else 0.0)
    result = search(index, "apple", REFS, reranker=prefers_pears)
    assert result.reranked
    assert result.reranker == "test"
    assert result.hits[0].heading == "Pears"
    assert result.hits[0].score == 1.0
    rest = result.hits[1:]
    assert [hit.bm25 for hit in rest] == sorted((hit.bm25 for hit in rest), reverse=True)


def against_bm25(candidate: Candidate) -> float:
    """The reverse of BM25's order: its first passage last."""
    return -candidate.bm25


def test_an_anchored_fusion_keeps_bm25s_first_passage_within_its_places(
    index: ChunkIndex,
) -> None:
    plain = search(index, "apple", REFS, reranker=bm25_only())
    first = plain.hits[0].chunk_id
    assert len(plain.hits) >= 4
    unanchored = search(index, "apple", REFS, reranker=AnchoredReranker(against_bm25, 0))
    assert [hit.chunk_id for hit in unanchored.hits].index(first) == len(unanchored.hits) - 1
    for places in (1, 2, 3):
        anchored = search(index, "apple", REFS, reranker=AnchoredReranker(against_bm25, places))
        ids = [hit.chunk_id for hit in anchored.hits]
        assert ids.index(first) == places - 1
        others = [hit.chunk_id for hit in unanchored.hits if hit.chunk_id != first]
        assert [i for i in ids if i != first] == others  # the rest keep the fused order


def test_an_anchor_changes_nothing_when_bm25s_first_is_already_within_it(
    index: ChunkIndex,
) -> None:
    agreeing = search(index, "apple", REFS, reranker=AnchoredReranker(lambda c: c.bm25, 3))
    plain = search(index, "apple", REFS, reranker=bm25_only())
    assert [hit.chunk_id for hit in agreeing.hits] == [hit.chunk_id for hit in plain.hits]


def test_equal_reranker_scores_keep_bm25_order(index: ChunkIndex) -> None:
    flat = search(index, "apple", REFS, reranker=ScoringReranker(lambda c: 0.5))
    plain = search(index, "apple", REFS, reranker=bm25_only())
    assert [hit.chunk_id for hit in flat.hits] == [hit.chunk_id for hit in plain.hits]


def test_a_reranker_that_did_not_rerank_keeps_bm25_order_and_its_warnings(
    index: ChunkIndex,
) -> None:
    result = search(index, "apple", REFS, reranker=UnavailableReranker())
    plain = search(index, "apple", REFS, reranker=bm25_only())
    assert not result.reranked
    assert result.warnings == ("down: HTTP 503, gave up after 2 retries",)
    assert [hit.chunk_id for hit in result.hits] == [h.chunk_id for h in plain.hits if h.bm25 > 0]
    assert [hit.score for hit in result.hits] == [hit.bm25 for hit in result.hits]
    assert result.unscored == result.candidates


def test_scores_that_break_the_protocol_fall_back_to_bm25_order(index: ChunkIndex) -> None:
    result = search(index, "apple", REFS, reranker=WrongLengthReranker())
    assert not result.reranked
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith("broken: returned 1 scores for")
    assert [hit.score for hit in result.hits] == [hit.bm25 for hit in result.hits]


def test_a_reranker_that_raises_is_reported_and_bm25_order_kept(index: ChunkIndex) -> None:
    result = search(index, "apple", REFS, reranker=RaisingReranker())
    plain = search(index, "apple", REFS, reranker=bm25_only())
    assert not result.reranked
    assert result.warnings == (
        "buggy: failed (RuntimeError: model file missing); using BM25 order",
    )
    assert [hit.chunk_id for hit in result.hits] == [h.chunk_id for h in plain.hits if h.bm25 > 0]


def test_the_reranker_reads_breadcrumb_and_text_keyed_by_sha256(index: ChunkIndex) -> None:
    reranker = bm25_only()
    before = time.monotonic()
    search(index, "  apple  ", REFS, reranker=reranker, rerank_timeout=3.0)
    ((query, candidates, deadline),) = reranker.calls
    assert query == "apple"
    assert before + 3.0 <= deadline <= time.monotonic() + 3.0
    chunks = {chunk.id: chunk for ref in REFS for chunk in index.chunks(ref)}
    read = {key: text for ref in REFS for key, text in index.reader_passages(ref)}
    assert candidates
    for candidate in candidates:
        assert read[candidate.key] == candidate.text
        assert candidate.key == hashlib.sha256(candidate.text.encode()).hexdigest()
        assert any(candidate.text.endswith(chunk.passage) for chunk in chunks.values())


def test_sources_name_each_cited_document_once_in_first_appearance_order(
    index: ChunkIndex,
) -> None:
    result = search(index, "apple", REFS, reranker=bm25_only(), top_k=10)
    documents_in_hit_order = list(dict.fromkeys(hit.document_id for hit in result.hits))
    assert [source.id for source in result.sources] == documents_in_hit_order
    assert len(documents_in_hit_order) == 2
    fruit = next(source for source in result.sources if source.id == "fruit")
    fruit_pages = sorted({hit.pages[0] for hit in result.hits if hit.document_id == "fruit"})
    assert fruit.name == "Fruit.pdf"
    assert fruit.first_page == fruit_pages[0]
    assert list(fruit.pages) == fruit_pages


def test_top_k_limits_the_hits(index: ChunkIndex) -> None:
    result = search(index, "apple", REFS, reranker=bm25_only(), top_k=2)
    assert len(result.hits) == 2
    assert result.candidates > 2


def test_hits_cite_document_name_and_pages(index: ChunkIndex) -> None:
    result = search(index, "oaks forests", REFS, reranker=bm25_only(), top_k=1)
    (hit,) = result.hits
    assert (hit.document_id, hit.document_name, hit.pages, hit.heading) == (
        "trees",
        "Trees.docx",
        (2, 2),
        "Forests",
    )
    assert "Oaks grow in forests." in hit.text


def test_no_matching_word_shows_what_the_reranker_scored_in_its_order(index: ChunkIndex) -> None:
    by_length = ScoringReranker(lambda candidate: len(candidate.text))
    result = search(index, "zebra", REFS, reranker=by_length, top_k=3)
    assert result.warnings == (no_match_note("test", shown=True),)
    assert "its order" in result.warnings[0] and "document order" not in result.warnings[0]
    assert result.exhaustive and result.no_term_matched
    scores = [hit.score for hit in result.hits]
    assert len(scores) == 3 and scores == sorted(scores, reverse=True) and len(set(scores)) == 3


def test_no_matching_word_without_a_reranker_is_nothing_and_says_so(index: ChunkIndex) -> None:
    """#24: with NoReranker every candidate is BM25 0 and unscored, so nothing is shown, and the
    warning says that, not "results are in document order" over an empty list."""
    result = search(index, "zebra", REFS, reranker=NoReranker(), top_k=3)
    assert result.hits == []
    assert result.no_term_matched
    assert result.warnings == (
        "no passage contains any of the query's words, so no passage is shown",
    )


def test_no_matching_word_with_a_reranker_that_scored_nothing_is_nothing(
    index: ChunkIndex,
) -> None:
    """The local model with no time to embed (a budget of 0; a cold cache) scores no candidate:
    it ranks nothing, so a query matching no word still shows nothing, whatever the model's
    state — and a deadline already passed says the same."""
    cold = LocalReranker(embed_budget=0.0)
    budgetless = search(index, "zebra", REFS, reranker=cold, top_k=3)
    late = search(index, "zebra", REFS, reranker=cold, top_k=3, rerank_timeout=1e-9)
    for result in (budgetless, late):
        assert result.hits == [], result.warnings
        assert no_match_note(None, shown=False) in result.warnings


def test_a_passage_without_a_query_word_or_a_score_is_not_shown_while_partly_ranked(
    index: ChunkIndex,
) -> None:
    """Partly ranked (the model warming, nothing scored yet): the passages holding a query word
    are shown, in BM25 order; the filler the shortlist padded with is not."""
    result = search(index, "apple", REFS, reranker=LocalReranker(embed_budget=0.0), top_k=10)
    assert result.hits and all(hit.bm25 > 0 for hit in result.hits)


def test_documents_passed_to_search_are_added_first() -> None:
    index = ChunkIndex()
    assert index.missing(REFS) == REFS
    result = search(index, "orchards", REFS, reranker=bm25_only(), documents=[FRUIT, TREES])
    assert result.hits[0].document_id == "trees"
    assert index.missing(REFS) == []


def test_searching_a_document_not_in_the_index_raises() -> None:
    with pytest.raises(DocumentNotIndexed) as raised:
        search(ChunkIndex(), "apple", REFS, reranker=bm25_only())
    assert raised.value.document_ids == ("fruit", "trees")


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_an_empty_query_is_a_typed_error(index: ChunkIndex, query: str) -> None:
    with pytest.raises(EmptyQuery) as raised:
        search(index, query, REFS, reranker=bm25_only())
    assert (raised.value.code, raised.value.status) == ("empty_query", 422)
    assert raised.value.message


def test_an_overlong_query_is_a_typed_error(index: ChunkIndex) -> None:
    with pytest.raises(QueryTooLong) as raised:
        search(index, "a" * (MAX_QUERY_CHARS + 1), REFS, reranker=bm25_only())
    assert raised.value.code == "query_too_long"
    assert str(MAX_QUERY_CHARS) in raised.value.message


@pytest.mark.parametrize("parameter", ["top_k", "keep", "max_candidates"])
def test_a_non_positive_limit_is_a_typed_error(index: ChunkIndex, parameter: str) -> None:
    with pytest.raises(InvalidSearchParameter) as raised:
        limits = {"top_k": 8, "keep": 100, "max_candidates": 200} | {parameter: 0}
        search(
            index,
            "apple",
            REFS,
            reranker=bm25_only(),
            top_k=limits["top_k"],
            keep=limits["keep"],
            max_candidates=limits["max_candidates"],
        )
    assert raised.value.code == "invalid_search_parameter"
    assert parameter in raised.value.message


def test_no_documents_give_an_empty_result_without_calling_the_reranker(index: ChunkIndex) -> None:
    reranker = bm25_only()
    result = search(index, "apple", [], reranker=reranker)
    assert result.hits == []
    assert result.sources == []
    assert reranker.calls == []


def test_to_dict_gives_the_rest_shape(index: ChunkIndex) -> None:
    result = search(index, "apple", REFS, reranker=UnavailableReranker(), top_k=1)
    shaped = json.loads(json.dumps(result.to_dict()))
    (first,) = shaped["results"]
    assert set(shaped) == {
        "results",
        "sources",
        "reranker",
        "reranked",
        "warnings",
        "insufficient_evidence",
    }
    assert set(first) == {
        "document",
        "pages",
        "heading",
        "text",
        "score",
        "relevance",
        "relevance_label",
        "near_copies",
        "answer_spans",
    }
    assert first["document"] == {"id": result.hits[0].document_id, "name": "Fruit.pdf"}
    assert shaped["reranker"] == "down"
    assert shaped["reranked"] is False


def test_every_name_in_all_is_exported() -> None:
    assert sorted(retrieval.__all__) == sorted(set(retrieval.__all__))
    for name in retrieval.__all__:
        assert getattr(retrieval, name) is not None


def test_in_bm25_order_passages_sharing_no_query_term_are_left_out(index: ChunkIndex) -> None:
    result = search(index, "apple", REFS, reranker=UnavailableReranker())
    vouched = search(index, "apple", REFS, reranker=bm25_only())

    assert result.hits and all(hit.bm25 > 0 for hit in result.hits)
    assert any(hit.bm25 == 0 for hit in vouched.hits), "a reranker that ran may keep them"


def test_searching_the_same_documents_again_gives_the_same_answer_from_the_merged_terms() -> None:
    index = ChunkIndex()
    refs = [FRUIT.ref, TREES.ref]
    first = search(index, "apple orchards", refs, reranker=NoReranker(), documents=[FRUIT, TREES])
    before = index.nbytes
    second = search(index, "apple orchards", refs, reranker=NoReranker())
    merged = index.nbytes
    assert merged > before  # the run was merged for the second search
    third = search(index, "apple orchards", refs, reranker=NoReranker())
    assert index.nbytes == merged  # and the third used that merge
    for result in (second, third):
        assert [(h.chunk_id, h.score, h.matched_words) for h in result.hits] == [
            (h.chunk_id, h.score, h.matched_words) for h in first.hits
        ]
    assert first.hits
