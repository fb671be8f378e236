"""MCP over Streamable HTTP at /mcp: the SDK's own client against the app under uvicorn."""

from __future__ import annotations

import httpx
import pytest

from service.mcp import INSTRUCTIONS
from tests.integration.mcp.conftest import (
    BOB_ONLY,
    QUOKKA,
    REPORT_PAGES,
    Library,
    http_client,
    report_pages,
    text_of,
)

pytestmark = pytest.mark.anyio

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


async def test_lists_the_tools_and_short_instructions(base_url: str, library: Library) -> None:
    async with http_client(base_url, library.alice_token) as client:
        listed = await client.list_tools()
        instructions = client.instructions

    tools = {tool.name: tool for tool in listed.tools}
    assert set(tools) == {
        "search_documents",
        "list_documents",
        "read_document",
        "find_mentions",
        "add_document",
        "import_url",
        "request_document",
        "show_page",
    }
    assert all(tool.description for tool in tools.values())
    assert tools["search_documents"].input_schema["required"] == ["query"]
    assert instructions == INSTRUCTIONS
    assert len(INSTRUCTIONS) < 2000


async def test_search_cites_the_page_that_holds_the_phrase(base_url: str, library: Library) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool(
            "search_documents", {"query": QUOKKA, "project": "research", "top_k": 3}
        )

    assert not result.is_error
    text = text_of(result)
    assert text.splitlines()[2] == "[1] report.pdf — p. 3"
    assert QUOKKA in text.split("[2]")[0]
    assert "Sources:" in text
    best = result.structured_content["results"][0]
    assert best["document"] == {"id": library.ids["report.pdf"], "name": "report.pdf"}
    assert best["pages"] == [3, 3]
    assert result.structured_content["reranked"] is False
    assert "text" not in best
    assert "is kept by the rangers" not in str(result.structured_content)


async def test_search_without_a_project_uses_the_project_named_default(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool("search_documents", {"query": "lighthouse fog signal"})

    assert not result.is_error, text_of(result)
    assert result.structured_content["project"]["name"] == "default"
    assert result.structured_content["results"][0]["document"]["name"] == "notes.md"


async def test_search_can_be_restricted_to_named_documents(base_url: str, library: Library) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool(
            "search_documents",
            {"query": "burrows", "project": library.ids["research"], "documents": ["REPORT.PDF"]},
        )

    assert not result.is_error, text_of(result)
    names = {hit["document"]["name"] for hit in result.structured_content["results"]}
    assert names == {"report.pdf"}


async def test_search_with_no_matching_word_says_so_and_suggests_other_words(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool(
            "search_documents", {"query": "xylophone", "project": "research"}
        )

    assert not result.is_error
    assert "no passage contains any of the query's words" in text_of(result)
    assert "other words" in text_of(result)
    assert result.structured_content["query_words_matched"] is False


async def test_list_documents_says_why_a_document_is_not_searchable(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool("list_documents", {"project": "research"})

    text = text_of(result)
    assert f"report.pdf (id {library.ids['report.pdf']}) — ready, {REPORT_PAGES} page(s)" in text
    broken = next(line for line in text.splitlines() if line.startswith("- broken.pdf"))
    assert "not searchable" in broken
    assert "upload it again" in broken
    entries = {entry["name"]: entry for entry in result.structured_content["documents"]}
    assert entries["broken.pdf"]["error"]["code"] == "corrupt_document"
    assert entries["broken.pdf"]["error"]["hint"]
    assert entries["report.pdf"]["searchable"] is True


@pytest.mark.parametrize("pages", ["3", 3], ids=["string", "integer"])
async def test_read_document_returns_only_the_pages_asked_for(
    base_url: str, library: Library, pages: str | int
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool(
            "read_document", {"document": library.ids["report.pdf"], "pages": pages}
        )

    assert not result.is_error, text_of(result)
    text = text_of(result)
    assert text.startswith(f"# report.pdf — p. 3 of {REPORT_PAGES}")
    assert QUOKKA in text
    assert "<!-- page 4 -->" not in text and "glacier" not in text
    assert result.structured_content["truncated"] is False


async def test_read_document_cuts_a_long_read_at_a_page_and_says_how_to_continue(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        first = await client.call_tool(
            "read_document", {"document": "report.pdf", "project": "research"}
        )
        follow = first.structured_content["continue_pages"]
        rest = await client.call_tool(
            "read_document", {"document": "report.pdf", "project": "research", "pages": follow}
        )

    assert first.structured_content["truncated"] is True
    assert len(text_of(first)) < 21_000
    assert f"call read_document with pages={follow} to continue" in text_of(first)
    first_text, _, last_text = follow.partition("-")
    start, end = int(first_text), int(last_text or first_text)
    assert first.structured_content["pages"] == [1, start - 1]
    assert end == REPORT_PAGES
    assert f"<!-- page {start} -->" not in text_of(first)
    assert f"<!-- page {start} -->" in text_of(rest)
    assert rest.structured_content["truncated"] is False


async def test_find_mentions_counts_every_occurrence_and_reports_absence(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        found = await client.call_tool(
            "find_mentions",
            {"terms": ["Quokka  Migration\nLedger", "rangers"], "project": "research"},
        )
        absent = await client.call_tool(
            "find_mentions", {"terms": "xylophone", "project": "research"}
        )
        either = await client.call_tool(
            "find_mentions",
            {"terms": ["xylophone", "rangers"], "project": "research", "match": "any"},
        )

    data = found.structured_content
    assert data["documents_searched"] == 1
    assert data["documents_not_searchable"] == 1
    assert data["terms"] == ["Quokka Migration Ledger", "rangers"]
    [report] = data["documents"]
    assert report["name"] == "report.pdf"
    assert report["counts"]["Quokka Migration Ledger"] == 1
    assert report["pages"]["Quokka Migration Ledger"] == [3]
    assert report["counts"]["rangers"] == sum(page.count("rangers") for page in report_pages())
    assert "1 of 1 searchable document(s)" in text_of(found)
    assert absent.structured_content["documents"] == []
    assert "No document in project 'research' contains 'xylophone'" in text_of(absent)
    assert [doc["name"] for doc in either.structured_content["documents"]] == ["report.pdf"]


async def test_bad_arguments_come_back_as_tool_errors_the_model_can_act_on(
    base_url: str, library: Library
) -> None:
    calls = [
        ("search_documents", {"query": "   ", "project": "research"}, "empty_query"),
        ("search_documents", {"query": "x" * 5000, "project": "research"}, "query_too_long"),
        (
            "search_documents",
            {"query": "tides", "top_k": 500, "project": "research"},
            "invalid_request",
        ),
        ("search_documents", {"query": "tides", "project": "nope"}, "project_not_found"),
        (
            "search_documents",
            {"query": "tides", "project": "research", "documents": ["missing.pdf"]},
            "document_not_found",
        ),
        (
            "search_documents",
            {"query": "tides", "project": "research", "documents": ["broken.pdf"]},
            "document_not_ready",
        ),
        ("read_document", {"document": "broken.pdf", "project": "research"}, "document_not_ready"),
        (
            "read_document",
            {"document": "report.pdf", "project": "research", "pages": "9-2"},
            "invalid_page_range",
        ),
        (
            "read_document",
            {"document": "report.pdf", "project": "research", "pages": "99"},
            "invalid_page_range",
        ),
        ("list_documents", {"project": "nope"}, "project_not_found"),
        ("find_mentions", {"terms": ["  "], "project": "research"}, "invalid_request"),
    ]
    async with http_client(base_url, library.alice_token) as client:
        for name, arguments, code in calls:
            result = await client.call_tool(name, arguments)

            assert result.is_error, (name, arguments)
            assert result.structured_content["error"]["code"] == code, (name, arguments)
            assert f"(error: {code})" in text_of(result)


async def test_a_not_ready_document_error_names_the_reason_and_the_fix(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool(
            "read_document", {"document": "broken.pdf", "project": "research"}
        )

    assert result.is_error
    assert "damaged" in text_of(result) and "upload it again" in text_of(result)


async def test_one_users_token_never_reaches_another_users_documents(
    base_url: str, library: Library
) -> None:
    bob_document = library.ids["bob-private.md"]
    bob_project = library.ids["bob-default"]
    async with http_client(base_url, library.alice_token) as alice:
        searched = await alice.call_tool(
            "search_documents", {"query": f"{QUOKKA} {BOB_ONLY}", "project": "research"}
        )
        mentioned = await alice.call_tool(
            "find_mentions", {"terms": [BOB_ONLY], "project": "research"}
        )
        read = await alice.call_tool("read_document", {"document": bob_document})
        listed = await alice.call_tool("list_documents", {"project": bob_project})
        restricted = await alice.call_tool(
            "search_documents",
            {"query": QUOKKA, "project": "research", "documents": [bob_document]},
        )
    async with http_client(base_url, library.bob_token) as bob:
        bobs = await bob.call_tool("search_documents", {"query": QUOKKA})

    assert {hit["document"]["name"] for hit in searched.structured_content["results"]} == {
        "report.pdf"
    }
    assert mentioned.structured_content["documents"] == []
    assert read.is_error and read.structured_content["error"]["code"] == "document_not_found"
    assert listed.is_error and listed.structured_content["error"]["code"] == "project_not_found"
    assert restricted.is_error
    assert {hit["document"]["name"] for hit in bobs.structured_content["results"]} == {
        "bob-private.md"
    }
    assert "report.pdf" not in text_of(bobs)


async def test_the_documents_resource_and_the_research_prompt(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        templates = await client.list_resource_templates()
        resource = await client.read_resource("shortlist://projects/research/documents")
        prompts = await client.list_prompts()
        prompt = await client.get_prompt("research-topic", {"topic": "quokka counts"})

    assert [t.uri_template for t in templates.resource_templates] == [
        "shortlist://projects/{project}/documents"
    ]
    assert "report.pdf" in resource.contents[0].text
    assert [p.name for p in prompts.prompts] == ["research-topic"]
    message = prompt.messages[0].content.text
    assert "quokka counts" in message and "search_documents" in message and "cit" in message


async def test_a_request_without_a_valid_token_is_refused_with_401_and_no_data(
    base_url: str, library: Library
) -> None:
    async with httpx.AsyncClient(base_url=base_url) as http:
        missing = await http.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        wrong = await http.post(
            "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer sl_nope"}
        )

    for response in (missing, wrong):
        assert response.status_code == 401
        assert response.headers["www-authenticate"].startswith("Bearer")
        body = response.json()
        assert set(body) == {"status", "code", "message"}
        assert body["status"] == 401 and body["code"] == "not_authenticated"


async def test_a_host_header_outside_the_allowed_list_is_refused(
    base_url: str, library: Library
) -> None:
    headers = {**MCP_HEADERS, "Authorization": f"Bearer {library.alice_token}"}
    async with httpx.AsyncClient(base_url=base_url) as http:
        refused = await http.post(
            "/mcp", json=INITIALIZE, headers={**headers, "Host": "evil.example"}
        )
        accepted = await http.post(
            "/mcp", json=INITIALIZE, headers={**headers, "Host": "localhost:8000"}
        )

    assert refused.status_code == 421
    assert accepted.status_code == 200
    assert accepted.json()["result"]["serverInfo"]["name"] == "shortlist"


async def test_search_nothing_answers_says_so_plainly_then_lists_the_closest_passages(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        absent = await client.call_tool(
            "search_documents",
            {"query": "How long should sourdough bread rest during the season?", "top_k": 2,
             "project": "research"},
        )  # fmt: skip
        present = await client.call_tool(
            "search_documents", {"query": QUOKKA, "project": "research", "top_k": 2}
        )

    assert not absent.is_error
    text = text_of(absent)
    assert text.startswith("The documents of project 'research' do not answer")
    assert "Say so rather than answer" in text
    assert "[1] report.pdf" in text  # the closest passages still follow
    assert absent.structured_content["insufficient_evidence"] is True
    assert absent.structured_content["query_words_matched"] is True
    assert {hit["relevance_label"] for hit in absent.structured_content["results"]} == {"low"}
    assert present.structured_content["insufficient_evidence"] is False
    assert "do not answer" not in text_of(present)
    best = present.structured_content["results"][0]
    assert best["relevance"] >= 0.5 and best["relevance_label"] in ("medium", "high")
