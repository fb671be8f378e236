"""The shortlist sweep on a corpus's own text."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.rerankers.none import NoReranker
from retrieval.tuning import held_out, sample_questions, sweep
from retrieval.types import Candidate, RerankResult, SourceDocument

DOCUMENTS = [
    SourceDocument(
        f"d{n}",
        f"doc{n}.pdf",
        f"h{n}",
        "".join(
            f"<!-- page {p} -->\n# Chapter {p} of document number {n}\n\n"
            f"The survey of orchard {n} on page {p} found {p * n} trees in the northern rows. "
            f"Each tree in orchard {n} was measured twice by the rangers during season {p}.\n\n"
            f"| block | trees | yield |\n|---|---|---|\n| north block {p} | {p * n} trees | {p + n} tonnes of apples |\n\n"
            for p in range(1, 6)
        ),
    )
    for n in range(1, 5)
]


def test_questions_come_from_headings_sentences_and_table_rows() -> None:
    questions = sample_questions(DOCUMENTS, 9, seed=3)
    assert len(questions) == 9
    assert {q.kind for q in questions} == {"heading", "sentence", "table row"}
    for question in questions:
        source = next(doc for doc in DOCUMENTS if doc.id == question.document)
        page = source.markdown.split(f"<!-- page {question.page} -->")[1].split("<!-- page")[0]
        assert question.text.split()[0] in page


def test_a_questions_page_is_the_one_its_marker_names_however_the_marker_is_spaced() -> None:
    """Pages are read with the page-marker module: a slice starting at page 7, a marker
    written with extra spaces and a neutralised look-alike in the text."""
    markdown = (
        "<!-- page 7 -->\nThe first sentence of this slice sits on its seventh page.\n\n"
        "<!-- (page 99) -->\n"
        "<!--  page 8  -->\nThe second sentence of this slice sits on its eighth page.\n"
    )
    document = SourceDocument("slice", "slice.pdf", "h", markdown)

    pages = {q.text.split()[1]: q.page for q in sample_questions([document], 10)}

    assert pages == {"first": 7, "second": 8}


def test_a_sentence_question_is_held_out_of_its_document() -> None:
    questions = [q for q in sample_questions(DOCUMENTS, 12, seed=1) if q.kind == "sentence"]
    cut = {doc.id: doc for doc in held_out(DOCUMENTS, questions)}
    for question in questions:
        assert question.text not in cut[question.document].markdown
        assert cut[question.document].content_hash != question.document  # a new cache key


class ReversedBm25:
    """A 'model' that prefers BM25's weakest candidates: small shortlists lose its top."""

    name = "reversed"

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        return RerankResult(scores=[-c.bm25 for c in candidates], reranked=True)


def test_bm25_order_loses_nothing_at_the_smallest_keep() -> None:
    report = sweep(DOCUMENTS, NoReranker(), questions=6, keeps=(5, 10))
    assert report.questions == 6
    assert report.passages == sum(k.keep for k in report.keeps[-1:])
    assert report.smallest_keep == 5
    assert all(result.agreement == 1.0 for result in report.keeps)
    assert report.to_dict()["smallest_keep"] == 5


def test_a_reranker_that_disagrees_with_bm25_needs_a_larger_keep() -> None:
    report = sweep(DOCUMENTS, ReversedBm25(), questions=6, keeps=(5, 10))
    by_keep = {result.keep: result.agreement for result in report.keeps}
    assert by_keep[5] < 1.0
    assert by_keep[report.passages] == 1.0  # reranking everything agrees with itself
    assert report.smallest_keep is not None and report.smallest_keep > 5
