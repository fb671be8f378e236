"""The README's quickstart question, "what does the paper conclude?", on a real paper.

The paper is DPR (``papers/multi-column.pdf``, Karpukhin et al. 2020), whose section 8
is "Conclusion". In CI it is cut to the abstract page, the two pages of experiments before
the conclusion, the conclusion's page and the first page of references (extracting all 13
pages costs about 8 CPU-seconds); the whole paper, with the local reranker, is a slow test.
"""

from __future__ import annotations

import hashlib

import pymupdf
import pytest

from extract.document import extract_document
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.base import Reranker
from retrieval.rerankers.none import NoReranker
from retrieval.types import SearchResult, SourceDocument
from tests.support.paths import CORPUS_DIR

PAPER = CORPUS_DIR / "papers" / "multi-column.pdf"
CONCLUSION_PAGE = 9
KEPT_PAGES = (1, 7, 8, CONCLUSION_PAGE, 10)
QUESTION = "what does the paper conclude?"

pytestmark = pytest.mark.skipif(not PAPER.exists(), reason="the shared corpus is not here")


def _document(data: bytes) -> SourceDocument:
    markdown = extract_document(data, PAPER.name, "application/pdf").markdown
    return SourceDocument(
        "dpr", PAPER.name, hashlib.sha256(markdown.encode()).hexdigest(), markdown
    )


def _pages(pages: tuple[int, ...]) -> bytes:
    with pymupdf.open(PAPER) as whole, pymupdf.open() as cut:  # type: ignore[no-untyped-call]
        for page in pages:
            cut.insert_pdf(whole, from_page=page - 1, to_page=page - 1)
        data: bytes = cut.tobytes()
        return data


def _ask(document: SourceDocument, reranker: Reranker, question: str = QUESTION) -> SearchResult:
    return search(
        ChunkIndex(), question, [document.ref], reranker=reranker, documents=[document],
        rerank_timeout=120,
    )  # fmt: skip


def test_the_quickstart_question_is_answered_from_the_conclusion() -> None:
    document = _document(_pages(KEPT_PAGES))
    conclusion_page = KEPT_PAGES.index(CONCLUSION_PAGE) + 1

    result = _ask(document, NoReranker())

    best = result.hits[0]
    assert not result.insufficient_evidence
    assert "Conclusion" in best.heading
    assert best.pages[0] <= conclusion_page <= best.pages[1]
    assert best.relevance_label == "high"
    assert best.answer_text.startswith("In this work, we demonstrated that dense retrieval")
    abstract = _ask(document, NoReranker(), "what is this paper about?").hits[0]
    assert abstract.pages == (1, 1)
    assert "Abstract" in abstract.heading or abstract.text.startswith("Open-domain question")


@pytest.mark.slow
def test_the_whole_paper_answers_from_its_conclusion_with_the_local_reranker() -> None:
    from retrieval.rerankers.local import LocalReranker

    document = _document(PAPER.read_bytes())

    result = _ask(document, LocalReranker())

    assert result.reranked
    assert "Conclusion" in result.hits[0].heading
    assert result.hits[0].pages[0] <= CONCLUSION_PAGE <= result.hits[0].pages[1]
