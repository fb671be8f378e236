from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import islice

import bm25s
import numpy as np
import pytest

from retrieval.shortlist import (
    MergedTerms,
    TermMatrix,
    bm25_scores,
    build_term_matrix,
    merge_term_matrices,
    shortlist,
    term_coverage,
)
from retrieval.tokenize import Tokenizer
from tests.support.paths import SCIFACT_DIR

TOKENIZER = Tokenizer()


def matrices(documents: Sequence[Sequence[str]]) -> list[TermMatrix]:
    """One term matrix per document, from its chunks' texts."""
    return [
        build_term_matrix([TOKENIZER.document_term_ids(text) for text in chunks])
        for chunks in documents
    ]


def query(text: str) -> list[int]:
    """The query's term ids (terms no passage has are left out: they score nothing)."""
    return [i for i in map(TOKENIZER.term_id, TOKENIZER.query_terms(text)) if i is not None]


def scifact_documents(count: int, per_document: int) -> list[list[str]]:
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        abstracts = [
            (row["title"] + "\n\n" + row["text"])
            for row in map(json.loads, islice(lines, count * per_document))
        ]
    return [abstracts[i : i + per_document] for i in range(0, len(abstracts), per_document)]


def scifact_queries(count: int) -> list[str]:
    with (SCIFACT_DIR / "queries.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line)["text"] for line in islice(lines, count)]


@pytest.mark.parametrize("searched", [[0, 1, 2], [2, 0]])
def test_query_time_bm25_equals_a_bm25s_lucene_index_of_the_searched_chunks(
    searched: list[int],
) -> None:
    documents = scifact_documents(count=3, per_document=120)
    cached = matrices(documents)
    chunk_terms = [TOKENIZER.document_terms(text) for i in searched for text in documents[i]]
    reference = bm25s.BM25(method="lucene", k1=1.5, b=0.75, dtype="float64")
    reference.index(chunk_terms, show_progress=False)
    compared = 0
    for query_text in scifact_queries(40):
        terms = TOKENIZER.query_terms(query_text)
        known = [term for term in terms if term in reference.vocab_dict]
        if not known:
            continue
        expected = reference.get_scores(known)
        actual = bm25_scores(query(query_text), [cached[i] for i in searched])
        np.testing.assert_allclose(actual, expected, rtol=1e-9, atol=1e-12)
        compared += int((expected > 0).sum() > 0)
    assert compared >= 30


def test_repeated_query_words_count_as_often_as_they_occur() -> None:
    cached = matrices([["apple pie", "banana bread", "apple banana"]])
    once = bm25_scores(query("apple banana"), cached)
    twice = bm25_scores(query("apple apple banana"), cached)
    assert twice[0] == pytest.approx(2 * once[0])
    assert twice[2] > once[2]


def test_chinese_and_japanese_queries_match_their_passages() -> None:
    cached = matrices(
        [
            [
                "The weather report for tomorrow.",
                "机器学习是人工智能的一个分支，研究计算机如何学习。",
                "東京タワーは東京都港区にある電波塔です。",
                "深度学习使用多层神经网络。",
            ]
        ]
    )
    chinese = shortlist(query("什么是机器学习"), cached, keep=2)
    japanese = shortlist(query("東京タワー"), cached, keep=2)
    assert chinese.entries[0].ordinal == 1
    assert japanese.entries[0].ordinal == 2
    assert japanese.entries[0].bm25 > 0


def test_a_plain_bm25s_tokenizer_misses_the_same_chinese_query() -> None:
    """Why CJK bigrams exist: bm25s's own tokenizer sees one token per run."""
    corpus = ["机器学习是人工智能的一个分支。", "天气预报说明天下雨。"]
    retriever = bm25s.BM25(method="lucene")
    retriever.index(
        bm25s.tokenize(corpus, stopwords=None, show_progress=False), show_progress=False
    )
    (tokens,) = bm25s.tokenize(["机器学习"], stopwords=None, show_progress=False, return_ids=False)
    assert retriever.get_scores(tokens).tolist() == [0.0, 0.0]
    indexed = matrices([corpus])  # first: the query keeps only terms some passage has
    ours = shortlist(query("机器学习"), indexed, keep=1)
    assert ours.entries[0].ordinal == 0
    assert ours.entries[0].bm25 > 0


@pytest.mark.parametrize(("text", "passage"), [("cafe", "Café au lait"), ("café", "the cafe")])
def test_accented_and_unaccented_words_match_each_other(text: str, passage: str) -> None:
    cached = matrices([["Tea and biscuits.", passage, "Something else entirely."]])
    result = shortlist(query(text), cached, keep=1)
    assert [(entry.ordinal, entry.bm25 > 0) for entry in result.entries] == [(1, True)]


def test_stemming_matches_running_with_runs() -> None:
    cached = matrices([["She runs every morning.", "Nothing here.", "More filler text."]])
    result = shortlist(query("running"), cached, keep=1)
    assert [(entry.ordinal, entry.bm25 > 0) for entry in result.entries] == [(0, True)]


def test_no_matching_term_returns_passages_in_document_order_up_to_the_cap() -> None:
    cached = matrices([[f"alpha passage {i}" for i in range(150)], ["beta"] * 100])
    result = shortlist(query("zebra"), cached, keep=100, max_candidates=200)
    assert result.no_term_matched
    assert not result.exhaustive
    assert result.total == 250
    expected = [(0, i) for i in range(150)] + [(1, i) for i in range(50)]
    assert [(entry.document, entry.ordinal) for entry in result.entries] == expected
    assert {entry.bm25 for entry in result.entries} == {0.0}


def test_no_matching_term_over_few_passages_returns_them_all_flagged_exhaustive() -> None:
    cached = matrices([["alpha", "beta"], ["gamma"]])
    result = shortlist(query("zebra"), cached)
    assert result.no_term_matched
    assert result.exhaustive
    assert [(entry.document, entry.ordinal) for entry in result.entries] == [(0, 0), (0, 1), (1, 0)]


def test_fewer_passages_than_keep_returns_all_best_first() -> None:
    cached = matrices([["apple", "pear", "apple apple pie"], ["plum", "apple tart"]])
    result = shortlist(query("apple"), cached, keep=10)
    assert result.exhaustive
    assert not result.no_term_matched
    assert len(result.entries) == 5
    scores = [entry.bm25 for entry in result.entries]
    assert scores == sorted(scores, reverse=True)
    assert [(e.document, e.ordinal) for e in result.entries if e.bm25 == 0] == [(0, 1), (1, 0)]


def test_keep_returns_the_best_matches_and_leaves_out_non_matching_passages() -> None:
    texts = [f"filler {i}" for i in range(300)]
    for i in range(0, 300, 10):
        texts[i] = "apple " * (1 + i % 7) + f"filler {i}"
    cached = matrices([texts[:200], texts[200:]])
    scores = bm25_scores(query("apple"), cached)
    result = shortlist(query("apple"), cached, keep=12, max_candidates=200)
    assert len(result.entries) == 12
    assert not result.exhaustive
    best = sorted(range(300), key=lambda i: (-scores[i], i))[:12]
    assert [e.document * 200 + e.ordinal for e in result.entries] == best
    few = shortlist(query("apple"), cached, keep=100, max_candidates=200)
    assert len(few.entries) == 30
    assert all(entry.bm25 > 0 for entry in few.entries)


def test_max_candidates_caps_keep() -> None:
    cached = matrices([[f"apple {i}" for i in range(50)]])
    result = shortlist(query("apple"), cached, keep=40, max_candidates=7)
    assert len(result.entries) == 7


def test_no_documents_give_an_empty_exhaustive_shortlist() -> None:
    result = shortlist(query("apple"), [])
    assert result.entries == []
    assert result.exhaustive
    assert not result.no_term_matched


def test_term_matrix_holds_each_chunks_term_frequencies() -> None:
    matrix = build_term_matrix([[1, 2, 1], [], [2]])
    assert matrix.lengths.tolist() == [3, 0, 1]
    assert matrix.chunk_count == 3
    postings: dict[int, list[tuple[int, int]]] = {}
    for term in matrix.vocabulary:
        span = matrix.span(term)
        assert span is not None
        chunks, frequencies = matrix.postings[:, span[0] : span[1]].tolist()
        postings[term] = list(zip(chunks, frequencies, strict=True))
    assert postings == {1: [(0, 2)], 2: [(0, 1), (2, 1)]}
    assert matrix.span(3) is None


def test_merged_matrices_score_exactly_as_the_documents_apart() -> None:
    documents = scifact_documents(count=6, per_document=40)
    documents.insert(2, [])  # a document with no passage
    documents.insert(4, ["", "and the of"])  # passages with no term
    apart = matrices(documents)
    merged = merge_term_matrices(apart)
    assert merged.offsets == tuple(np.cumsum([0] + [m.chunk_count for m in apart]).tolist())
    compared = 0
    for query_text in scifact_queries(60):
        ids = query(query_text) + query(query_text)[:1]  # a repeated term weighs twice
        for scored in (bm25_scores, term_coverage):
            assert np.array_equal(scored(ids, merged), scored(ids, apart))
        # Other parameters than the defaults the merge worked the frequency part out for.
        assert np.array_equal(
            bm25_scores(ids, merged, k1=1.2, b=0.5), bm25_scores(ids, apart, k1=1.2, b=0.5)
        )
        assert shortlist(ids, merged, keep=20) == shortlist(ids, apart, keep=20)
        compared += int(bm25_scores(ids, merged).any())
    assert compared >= 40


def test_a_merge_for_some_terms_holds_their_postings_as_the_whole_merge_does() -> None:
    apart = matrices(scifact_documents(count=4, per_document=30))
    whole = merge_term_matrices(apart)
    ids = [*query("vitamin D deficiency in children"), 10**9]  # and a term no passage has
    some = merge_term_matrices(apart, ids)
    assert set(some.vocabulary) == set(ids) & set(whole.vocabulary)
    for term, packed in some.vocabulary.items():
        mine = some.postings[:, packed >> 32 : packed & 0xFFFFFFFF]
        theirs = whole.postings[
            :, whole.vocabulary[term] >> 32 : whole.vocabulary[term] & 0xFFFFFFFF
        ]
        assert np.array_equal(mine, theirs)
        assert (np.diff(mine[0]) > 0).all()  # each term's chunks ascending across documents


def test_merging_no_documents_or_no_terms_gives_an_empty_matrix() -> None:
    for merged in (merge_term_matrices([]), merge_term_matrices(matrices([["", "the"]]))):
        assert isinstance(merged, MergedTerms)
        assert merged.vocabulary == {}
        assert merged.postings.shape == (2, 0)
    assert shortlist(query("apple"), merge_term_matrices([])).entries == []
