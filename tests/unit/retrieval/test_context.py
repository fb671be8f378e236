"""BM25 reads a passage with its document's title and informative file name."""

from __future__ import annotations

from retrieval.context import bm25_text, document_context, document_title, informative_name
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import SourceDocument


def test_informative_names_drop_numbers_extensions_and_filler_words() -> None:
    assert informative_name("senate-expenditures.pdf") == "senate expenditures"
    assert informative_name("test_4026.pdf") == ""
    assert informative_name("scan 0001 final.PDF") == ""
    assert informative_name("Ki67_guideline_v2.docx") == "Ki67 guideline"


def test_the_context_skips_what_the_passage_already_shows() -> None:
    markdown = "<!-- page 1 -->\n# **Ki67 in Breast Cancer**\n\nText.\n"
    assert document_title(markdown) == "Ki67 in Breast Cancer"
    context = document_context("ki67-in-breast-cancer.pdf", markdown)
    assert context == ("Ki67 in Breast Cancer", "")  # the name only repeats the title
    assert bm25_text(context, "Ki67 in Breast Cancer > Methods", "body") == "body"
    assert bm25_text(context, "Methods", "body") == "Ki67 in Breast Cancer\nbody"


def test_a_question_naming_the_subject_finds_the_page_that_answers() -> None:
    report = SourceDocument(
        "r",
        "hurricane-season-report.pdf",
        "h",
        "<!-- page 1 -->\nA summary of the year.\n\n"
        "<!-- page 2 -->\nStorms of the season made landfall on the coast 14 times in all.\n",
    )
    other = SourceDocument(
        "o", "minutes.pdf", "m", "<!-- page 1 -->\nLandfall sites were listed.\n"
    )
    index = ChunkIndex(chunk_size=200)
    index.add([report, other])
    result = search(index, "hurricane landfall", [report.ref, other.ref], reranker=NoReranker())
    assert (result.hits[0].document_id, result.hits[0].pages) == ("r", (2, 2))
    assert "hurricane" not in result.hits[0].text  # the hit's text is the passage as it was
