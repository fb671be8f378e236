"""BM25 and the reranker read a passage with its document's title and informative file name."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.context import (
    context_prefix,
    context_prefixes,
    document_context,
    document_title,
    in_context,
    informative_name,
)
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import Candidate, RerankResult, SourceDocument


def test_informative_names_drop_numbers_extensions_and_filler_words() -> None:
    assert informative_name("senate-expenditures.pdf") == "senate expenditures"
    assert informative_name("test_4026.pdf") == ""
    assert informative_name("scan 0001 final.PDF") == ""
    assert informative_name("Ki67_guideline_v2.docx") == "Ki67 guideline"


TITLE_LINE = re.compile(r"^#[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
"""The title's definition: the first line that is a top-level heading."""


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="# \t\n\r*_ab", max_size=60))
def test_the_title_is_the_first_line_that_is_a_top_level_heading(markdown: str) -> None:
    """Sought by its ``#`` rather than at every character, it is still the first line that
    matches the definition, never a ``# `` inside a line."""
    match = TITLE_LINE.search(markdown)
    assert document_title(markdown) == (match.group(1).strip("*_ ") if match else "")


def test_a_document_s_prefixes_are_each_heading_s_and_equal_ones_are_one_string() -> None:
    context = ("Ki67 in Breast Cancer", "guideline")
    headings = ("Methods", "Ki67 in Breast Cancer > Methods", "Results", "Methods", "")
    prefixes = context_prefixes(context, headings)
    assert prefixes == tuple(context_prefix(context, heading) for heading in headings)
    assert prefixes[0] == "Ki67 in Breast Cancer\nguideline\n" and prefixes[1] == "guideline\n"
    assert prefixes[0] is prefixes[2] is prefixes[3] is prefixes[4]  # one string, not four
    assert context_prefixes(("", ""), headings) == ("",) * len(headings)


def test_the_context_skips_what_the_passage_already_shows() -> None:
    markdown = "<!-- page 1 -->\n# **Ki67 in Breast Cancer**\n\nText.\n"
    assert document_title(markdown) == "Ki67 in Breast Cancer"
    context = document_context("ki67-in-breast-cancer.pdf", markdown)
    assert context == ("Ki67 in Breast Cancer", "")  # the name only repeats the title
    assert in_context(context, "Ki67 in Breast Cancer > Methods", "body") == "body"
    assert in_context(context, "Methods", "body") == "Ki67 in Breast Cancer\nbody"


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


class Recording:
    """A reranker that keeps the candidates it was given and keeps BM25 order."""

    name = "recording"

    def __init__(self) -> None:
        self.seen: list[Candidate] = []

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        self.seen.extend(candidates)
        return RerankResult(scores=[c.bm25 for c in candidates], reranked=True)


def test_the_reranker_reads_the_same_context_keyed_by_what_it_reads() -> None:
    report = SourceDocument(
        "r",
        "coastal-storms.pdf",
        "h",
        "<!-- page 1 -->\n# Hurricane season 2024\n\nA summary of the year.\n\n"
        "<!-- page 2 -->\n# Landfalls\n\nStorms made landfall on the coast 14 times.\n",
    )
    index = ChunkIndex(chunk_size=60)
    index.add([report])
    reranker = Recording()
    search(index, "landfall", [report.ref], reranker=reranker)
    (candidate,) = [c for c in reranker.seen if "landfall" in c.text]
    (chunk,) = [c for c in index.chunks(report.ref) if "landfall" in c.text]
    assert chunk.heading == "Landfalls"  # the breadcrumb alone does not name the document
    assert candidate.text == "Hurricane season 2024\ncoastal storms\n" + chunk.passage
    assert candidate.key == hashlib.sha256(candidate.text.encode()).hexdigest() != chunk.key
    assert index.reader_passages(report.ref)[chunk.ordinal] == (candidate.key, candidate.text)
