"""Absolute relevance and the evidence verdict: term coverage, calibration, the pipeline's answer."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.relevance import (
    EVIDENCE_FLOOR,
    LEXICAL,
    LOCAL,
    insufficient_evidence,
    relevance_label,
    sigmoid,
)
from retrieval.rerankers.none import NoReranker
from retrieval.shortlist import build_term_matrix, shortlist, term_coverage
from retrieval.types import Candidate, RerankResult, SourceDocument

KI67 = SourceDocument(
    "ki67",
    "ki67-guideline.pdf",
    "k1",
    "<!-- page 1 -->\n# Ki67 in breast cancer\n\nKi67 is a proliferation marker used to grade "
    "invasive breast carcinoma.\n\n"
    "<!-- page 2 -->\n# Counting methods\n\nHot spot assessment: counting a single field of 500 "
    "tumour cells in the area with the highest labelling rate. Global assessment averages four "
    "high power fields across the tumour.\n\n"
    "<!-- page 3 -->\n# Controls\n\nTonsil is the external positive control and liver the "
    "external negative control for the staining run.\n",
)
FUND = SourceDocument(
    "fund",
    "fund-notes.pdf",
    "f1",
    "<!-- page 1 -->\n# Notes to financial statements\n\nClass A shares are sold with a front-end "
    "sales charge of up to 4.25% for purchases not exceeding $1,000,000. Class C shares are "
    "subject to a contingent deferred sales charge of 1% within the first year.\n",
)
DOCUMENTS = (KI67, FUND)
REFS = [doc.ref for doc in DOCUMENTS]


@pytest.fixture(scope="module")
def index() -> ChunkIndex:
    built = ChunkIndex(chunk_size=200)
    built.add(DOCUMENTS)
    return built


def test_coverage_weighs_each_distinct_query_term_by_its_idf() -> None:
    # Three chunks: term 1 is everywhere (common), term 2 only in chunk 0 (rare).
    matrix = build_term_matrix([[1, 2, 2], [1], [1, 3]])
    both, common_only, other = term_coverage([1, 2, 2], [matrix]).tolist()
    assert both == pytest.approx(1.0)  # repeats do not count twice
    assert 0.0 < common_only < 0.5  # the common term is the lesser part of the query
    assert other == pytest.approx(common_only)


def test_coverage_counts_query_terms_no_passage_has_as_uncovered() -> None:
    matrix = build_term_matrix([[1, 2], [3]])
    alone = term_coverage([1, 2], [matrix])[0]
    with_unknown = term_coverage([1, 2], [matrix], unknown_terms=2)[0]
    absent_id = term_coverage([1, 2, 99], [matrix])[0]
    assert alone == pytest.approx(1.0)
    assert with_unknown < 0.5
    assert absent_id < alone
    assert term_coverage([], [matrix], unknown_terms=1).tolist() == [0.0, 0.0]
    assert term_coverage([1], []).tolist() == []


def test_the_shortlist_carries_each_entrys_coverage() -> None:
    matrix = build_term_matrix([[1, 2], [1], [3]])
    picked = shortlist([1, 2], [matrix], keep=10)
    coverage = {entry.ordinal: entry.coverage for entry in picked.entries}
    expected = term_coverage([1, 2], [matrix])
    assert coverage == pytest.approx({n: float(expected[n]) for n in coverage})
    assert coverage[0] == pytest.approx(1.0)


def test_calibrations_rise_with_every_signal_and_stay_within_0_and_1() -> None:
    assert LEXICAL(0.0) < LEXICAL(0.5) < LEXICAL(1.0)
    assert LOCAL(0.1, 0.5) < LOCAL(0.6, 0.5)
    assert LOCAL(0.4, 0.2) < LOCAL(0.4, 0.9)
    assert 0.0 <= sigmoid(-800.0) < sigmoid(0.0) == 0.5 < sigmoid(800.0) <= 1.0
    with pytest.raises(ValueError, match="expected 2 features"):
        LOCAL(0.5)


def test_verdict_and_labels_follow_the_floor() -> None:
    assert insufficient_evidence([])
    assert insufficient_evidence([EVIDENCE_FLOOR - 0.01])
    assert not insufficient_evidence([0.0, EVIDENCE_FLOOR])
    assert relevance_label(EVIDENCE_FLOOR - 0.01) == "low"
    assert relevance_label(EVIDENCE_FLOOR) == "medium"
    assert relevance_label(0.99) == "high"


@pytest.mark.parametrize(
    "question",
    [
        "How many cells are counted in hot spot Ki67 assessment?",
        "front-end sales charge of Class A shares",
        "Which tissue is the external negative control for the staining?",
    ],
)
def test_a_question_the_documents_answer_has_evidence(index: ChunkIndex, question: str) -> None:
    result = search(index, question, REFS, reranker=NoReranker())
    assert not result.insufficient_evidence
    assert result.hits[0].relevance >= EVIDENCE_FLOOR
    assert result.hits[0].relevance_label in ("medium", "high")


@pytest.mark.parametrize(
    "question",
    [
        "xylophone quokka",
        "How long should I bake sourdough bread and at what oven temperature?",
        "Who won the football world cup in 2014?",
        "What is the recommended daily dose of vitamin D for adults?",
    ],
)
def test_a_question_nothing_answers_is_flagged(index: ChunkIndex, question: str) -> None:
    result = search(index, question, REFS, reranker=NoReranker())
    assert result.insufficient_evidence
    assert all(hit.relevance < EVIDENCE_FLOOR for hit in result.hits)
    assert all(hit.relevance_label == "low" for hit in result.hits)


class FixedRelevance:
    """A reranker that states its own absolute relevance (as Cohere does)."""

    name = "fixed"

    def __init__(self, relevance: tuple[float, ...] | None) -> None:
        self.relevance = relevance

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        scores = [float(len(candidates) - n) for n in range(len(candidates))]
        if self.relevance is None:
            return RerankResult(scores=scores, reranked=True)
        return RerankResult(
            scores=scores, reranked=True, relevance=self.relevance[: len(candidates)]
        )


def test_the_rerankers_own_relevance_is_used_when_it_gives_one(index: ChunkIndex) -> None:
    query = "Ki67 hot spot cells"
    confident = search(index, query, REFS, reranker=FixedRelevance((0.97,) + (0.01,) * 20))
    assert confident.hits[0].relevance == pytest.approx(0.97)
    assert not confident.insufficient_evidence
    doubtful = search(index, query, REFS, reranker=FixedRelevance((0.05,) * 21))
    assert doubtful.insufficient_evidence
    assert {hit.relevance for hit in doubtful.hits} == {0.05}


def test_without_the_rerankers_relevance_the_lexical_estimate_is_used(index: ChunkIndex) -> None:
    query = "Ki67 hot spot cells"
    silent = search(index, query, REFS, reranker=FixedRelevance(None))
    plain = search(index, query, REFS, reranker=NoReranker())
    by_chunk = {hit.chunk_id: hit.relevance for hit in plain.hits}
    shared = [hit for hit in silent.hits if hit.chunk_id in by_chunk]
    assert shared
    assert [hit.relevance for hit in shared] == [by_chunk[hit.chunk_id] for hit in shared]
    # Values outside [0, 1] from a reranker are clamped, NaN counts as no evidence.
    odd = search(index, query, REFS, reranker=FixedRelevance((1.7, float("nan")) + (-1.0,) * 20))
    assert all(0.0 <= hit.relevance <= 1.0 for hit in odd.hits)
    assert max(hit.relevance for hit in odd.hits) == 1.0


def test_high_needs_the_key_terms_or_a_confident_embedding() -> None:
    from retrieval.relevance import (
        CONFIDENT_COSINE,
        KEY_COVERAGE,
        earned,
        local_relevance,
        relevance_label,
    )

    assert relevance_label(earned(0.95, coverage=KEY_COVERAGE)) == "high"
    assert relevance_label(earned(0.95, coverage=0.2, cosine=CONFIDENT_COSINE)) == "high"
    assert relevance_label(earned(0.95, coverage=0.2, cosine=0.3)) == "medium"
    assert relevance_label(earned(0.95, coverage=0.2)) == "medium"
    assert earned(0.6, coverage=0.0) == 0.6  # below high nothing changes, nor the verdict
    # a passage sharing few of the question's words reads "medium", however high its estimate
    assert relevance_label(local_relevance(cosine=0.55, coverage=0.3)) != "high"
