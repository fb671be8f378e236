"""Comparison questions bring evidence from each side."""

from __future__ import annotations

import pytest

from retrieval.comparison import balance_sides, comparison_sides
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import SourceDocument


@pytest.mark.parametrize(
    ("query", "sides"),
    [
        ("Compare BM25 and dense retrieval", ("BM25", "dense retrieval")),
        ("compare sofosbuvir with glecaprevir?", ("sofosbuvir", "glecaprevir")),
        ("What is the difference between TAM and TAM2?", ("TAM", "TAM2")),
        ("How does RetNRef differ from a memory network?", ("RetNRef", "a memory network")),
        ("SpiderMonkey vs V8", ("SpiderMonkey", "V8")),
    ],
)
def test_comparison_questions_name_their_two_sides(query: str, sides: tuple[str, str]) -> None:
    assert comparison_sides(query) == sides


@pytest.mark.parametrize(
    "query", ["How many cells are counted?", "bread and butter", "compare", "x vs x"]
)
def test_other_queries_are_not_comparisons(query: str) -> None:
    assert comparison_sides(query) is None


def test_balance_lets_the_sides_take_turns_and_keeps_the_rest_after() -> None:
    # Ranked 0..5: 0, 1, 2 speak to A; 3 to B; 4 to both; 5 to neither.
    side_a = [0.9, 0.8, 0.7, 0.0, 0.9, 0.0]
    side_b = [0.0, 0.0, 0.0, 0.9, 0.6, 0.1]
    assert balance_sides([0, 1, 2, 3, 4, 5], side_a, side_b) == [0, 3, 1, 4, 2, 5]
    # One side has nothing of its own: the order stays.
    assert balance_sides([0, 1], [0.9, 0.9], [0.0, 0.0]) == [0, 1]


APPLES = SourceDocument(
    "apples",
    "apples.pdf",
    "a1",
    "".join(
        f"<!-- page {n} -->\n# Apples {n}\n\nApples: {text}\n"
        for n, text in enumerate(
            ("crisp apples, apple pie.", "apple juice, apples baked.", "dried apples, apple jam."),
            start=1,
        )
    ),
)
PEARS = SourceDocument(
    "pears",
    "pears.pdf",
    "p1",
    "".join(
        f"<!-- page {n} -->\n# Orchard notes {n}\n\nThe orchard was walked in {season} by the "
        f"keeper, who noted the state of the {things}, and that the pears on the south wall "
        "ripen late, after the plums.\n"
        for n, (season, things) in enumerate(
            (
                ("autumn", "hedges, the gates and the drainage"),
                ("spring", "new grafts, the beehives and the frost damage"),
                ("winter", "pruning cuts, the fences and the paths"),
            ),
            start=1,
        )
    ),
)


def test_a_comparison_brings_evidence_from_each_side() -> None:
    index = ChunkIndex(chunk_size=200)
    index.add([APPLES, PEARS])
    refs = [APPLES.ref, PEARS.ref]
    plain = search(index, "apples pears", refs, reranker=NoReranker(), top_k=3)
    assert [hit.document_id for hit in plain.hits] == ["apples"] * 3  # one side fills the top
    compared = search(index, "compare apples and pears", refs, reranker=NoReranker(), top_k=3)
    assert [hit.document_id for hit in compared.hits] == ["apples", "pears", "apples"]
