"""MCP over stdio: the SDK's client launches ``python -m service.cli mcp`` as a real process."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from mcp.client import Client

from tests.integration.mcp.conftest import QUOKKA, Library, stdio_parameters, text_of
from tests.support.paths import REPO_DIR

pytestmark = pytest.mark.anyio


async def test_stdio_searches_the_project_given_with_the_token_user(library: Library) -> None:
    parameters = stdio_parameters(library, "--project", "research", token=library.alice_token)
    async with Client(parameters) as client:
        tools = await client.list_tools()
        searched = await client.call_tool("search_documents", {"query": QUOKKA, "top_k": 2})
        mentions = await client.call_tool("find_mentions", {"terms": [QUOKKA]})
        read = await client.call_tool("read_document", {"document": "report.pdf", "pages": "3"})
        elsewhere = await client.call_tool("list_documents", {"project": "default"})

    assert {tool.name for tool in tools.tools} >= {"search_documents", "find_mentions"}
    best = searched.structured_content["results"][0]
    assert (best["document"]["name"], best["pages"]) == ("report.pdf", [3, 3])
    assert text_of(searched).splitlines()[2] == "[1] report.pdf — p. 3"
    assert [doc["name"] for doc in mentions.structured_content["documents"]] == ["report.pdf"]
    assert QUOKKA in text_of(read)
    assert [doc["name"] for doc in elsewhere.structured_content["documents"]] == ["notes.md"]


async def test_stdio_acting_for_another_user_sees_only_their_documents(library: Library) -> None:
    async with Client(stdio_parameters(library, "--user", "bob")) as client:
        searched = await client.call_tool("search_documents", {"query": QUOKKA})
        listed = await client.call_tool("list_documents", {})
        report = await client.call_tool("read_document", {"document": library.ids["report.pdf"]})
        research = await client.call_tool("list_documents", {"project": library.ids["research"]})

    assert {hit["document"]["name"] for hit in searched.structured_content["results"]} == {
        "bob-private.md"
    }
    assert [doc["name"] for doc in listed.structured_content["documents"]] == ["bob-private.md"]
    assert report.is_error and report.structured_content["error"]["code"] == "document_not_found"
    assert research.is_error and research.structured_content["error"]["code"] == "project_not_found"


def test_stdio_with_an_unknown_project_exits_2_before_serving(library: Library) -> None:
    parameters = stdio_parameters(library, "--project", "nope", token=library.alice_token)
    result = subprocess.run(
        [sys.executable, *parameters.args],
        env={**os.environ, **(parameters.env or {})},
        cwd=REPO_DIR,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )

    assert result.returncode == 2
    assert "no project named 'nope'" in result.stderr
    assert result.stdout == ""
