"""The folded near-copies of a hit, as the MCP text, the REST body and the CLI JSON show them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import msgspec

from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import SearchResult, SourceDocument
from service.mcp import render
from service.records import Project
from service.services.search import ProjectSearch
from service.shapes import SearchResponse

CLAUSE = (
    "The supplier shall deliver the spare parts to the warehouse within {days} working days "
    "of the order and shall bear the cost of any return caused by damage in transit."
)
OLD, NEW = str(uuid.uuid4()), str(uuid.uuid4())


def _result() -> SearchResult:
    documents = [
        SourceDocument(
            OLD, "contract-2023.pdf", "a", "<!-- page 2 -->\n" + CLAUSE.format(days="ten")
        ),
        SourceDocument(
            NEW, "contract-2024.pdf", "b", "<!-- page 3 -->\n" + CLAUSE.format(days="five")
        ),
    ]
    index = ChunkIndex()
    index.add(documents)
    return search(index, "damage in transit", [d.ref for d in documents], reranker=NoReranker())


def _found(result: SearchResult) -> ProjectSearch:
    project = Project(uuid.uuid4(), "contracts", datetime.now(UTC), 2, 2)
    return ProjectSearch(project, "damage in transit", result, documents_not_searchable=0)


def test_the_mcp_text_says_where_the_folded_copy_is() -> None:
    result = _result()
    (hit,) = result.hits
    (copy,) = hit.near_copies
    text = render.search_text(_found(result))
    assert text.count("warehouse") == 2  # the best-matching sentence first, then the passage
    assert f"  (1 near-copy folded: {copy.document_name} p. {copy.pages[0]})" in text.splitlines()


def test_the_rest_body_and_cli_json_carry_the_folded_copy() -> None:
    result = _result()
    body = msgspec.json.decode(msgspec.json.encode(SearchResponse.from_search(_found(result))))
    (shown,) = body["results"]
    (copy,) = shown["near_copies"]
    assert {shown["document"]["id"], copy["document"]["id"]} == {OLD, NEW}
    assert copy["pages"] == ([2, 2] if copy["document"]["id"] == OLD else [3, 3])
    assert 0.5 <= copy["similarity"] < 1.0


def test_the_mcp_text_puts_the_answering_sentence_first() -> None:
    result = _result()
    (hit,) = result.hits
    lines = render.search_text(_found(result)).splitlines()
    header = next(n for n, line in enumerate(lines) if line.startswith("[1] "))
    assert lines[header + 1] == f"  Best match: {hit.answer_text}"
    assert "damage in transit" in hit.answer_text
    assert lines[header + 2].startswith("  The supplier shall deliver")


def test_the_rest_body_and_cli_json_carry_the_answer_spans() -> None:
    result = _result()
    body = msgspec.json.decode(msgspec.json.encode(SearchResponse.from_search(_found(result))))
    (shown,) = body["results"]
    ((start, end),) = shown["answer_spans"]
    assert shown["text"][start:end] == result.hits[0].answer_text
    assert shown["text"][start:end].endswith("damage in transit.")
