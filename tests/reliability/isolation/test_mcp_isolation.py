"""Promise 1 over MCP: bob's token, naming alice's project or document, gets nothing of hers.

The tool, resource-template and prompt lists come from the server itself, so a
new one makes ``test_every_mcp_capability_is_known_to_the_isolation_matrix``
fail until it is taught how to name alice's things.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from litestar.testing import AsyncTestClient
from mcp.shared.exceptions import MCPError

from service.app import create_app
from tests.integration.documents.conftest import bearer
from tests.integration.mcp.conftest import http_client, live_app, text_of
from tests.reliability.isolation.conftest import (
    ALICE_DOCUMENT,
    ALICE_PROJECT,
    ALICE_REQUEST_TITLE,
    World,
    assert_no_alice_data,
)

pytestmark = pytest.mark.anyio

QUERY = "survey of the northern coast"

#: Argument sets per tool, each naming alice's project or document by name or by id.
TOOL_CALLS: dict[str, Callable[[World], list[dict[str, Any]]]] = {
    "search_documents": lambda w: [
        {"query": QUERY, "project": ALICE_PROJECT},
        {"query": QUERY, "project": w.alice_project_id},
        {"query": QUERY, "documents": [w.alice_document_id]},
        {"query": QUERY, "documents": [ALICE_DOCUMENT]},
        {"query": QUERY, "project": ALICE_PROJECT, "documents": [ALICE_DOCUMENT]},
    ],
    "list_documents": lambda w: [
        {"project": ALICE_PROJECT},
        {"project": w.alice_project_id},
        {"project": w.alice_default_project_id},
    ],
    "read_document": lambda w: [
        {"document": w.alice_document_id},
        {"document": ALICE_DOCUMENT},
        {"document": ALICE_DOCUMENT, "project": ALICE_PROJECT},
        {"document": ALICE_DOCUMENT, "project": w.alice_project_id},
        {"document": w.alice_document_id, "project": w.alice_project_id},
    ],
    "show_page": lambda w: [
        {"document": w.alice_document_id, "page": 1},
        {"document": ALICE_DOCUMENT, "page": 1},
        {"document": ALICE_DOCUMENT, "page": 1, "project": ALICE_PROJECT},
        {"document": w.alice_document_id, "page": 1, "highlight": f"{w.alice_document_id}:0"},
    ],
    "find_mentions": lambda w: [
        {"terms": ["survey"], "project": ALICE_PROJECT, "match": "any"},
        {"terms": "survey", "project": w.alice_project_id},
        {"terms": ["survey", "coast"], "match": "any"},
    ],
    "add_document": lambda w: [
        {"name": "bob.md", "content": "bob's note", "project": ALICE_PROJECT},
        {"name": "bob.md", "content": "bob's note", "project": w.alice_project_id},
        {"name": "bob.md", "content": "bob's note", "project": w.alice_default_project_id},
    ],
    "import_url": lambda w: [
        {"url": "https://192.0.2.1/bob.pdf", "project": ALICE_PROJECT},
        {"url": "https://192.0.2.1/bob.pdf", "project": w.alice_project_id},
    ],
    "request_document": lambda w: [
        {"title": ALICE_REQUEST_TITLE, "project": ALICE_PROJECT},
        {"title": "Bob's wish", "project": w.alice_project_id},
        {"title": "Bob's wish", "project": w.alice_default_project_id},
    ],
}

#: Resource URIs per template, naming alice's project by name and by id.
RESOURCE_READS: dict[str, Callable[[World], list[str]]] = {
    "shortlist://projects/{project}/documents": lambda w: [
        f"shortlist://projects/{ALICE_PROJECT}/documents",
        f"shortlist://projects/{w.alice_project_id}/documents",
    ],
}

#: Prompts take no project or document, so they cannot reach anyone's data.
PROMPTS_WITHOUT_DATA = {"research-topic"}


@pytest.fixture(scope="module")
def base_url(world: World) -> Iterator[str]:
    with live_app(world.settings) as url:
        yield url


async def test_every_mcp_capability_is_known_to_the_isolation_matrix(
    base_url: str, world: World
) -> None:
    async with http_client(base_url, world.bob_token) as client:
        tools = {tool.name for tool in (await client.list_tools()).tools}
        templates = {
            t.uri_template for t in (await client.list_resource_templates()).resource_templates
        }
        prompts = {prompt.name for prompt in (await client.list_prompts()).prompts}

    assert tools - TOOL_CALLS.keys() == set(), "teach TOOL_CALLS how to call the new tool"
    assert templates - RESOURCE_READS.keys() == set(), "teach RESOURCE_READS the new template"
    assert prompts - PROMPTS_WITHOUT_DATA == set(), "check the new prompt cannot read data"


async def test_no_mcp_tool_gives_bob_alices_data(base_url: str, world: World) -> None:
    answered: list[str] = []
    async with http_client(base_url, world.bob_token) as client:
        tools = [tool.name for tool in (await client.list_tools()).tools]
        for name in tools:
            for arguments in TOOL_CALLS[name](world):
                result = await client.call_tool(name, arguments)
                sent = json.dumps(arguments)
                shown = text_of(result) + json.dumps(result.structured_content)
                assert_no_alice_data(world, shown, asked_with=sent)
                answered.append(f"{name} {sent}: {'error' if result.is_error else 'empty'}")

    assert len(answered) == sum(len(calls(world)) for calls in TOOL_CALLS.values())


async def test_reading_alices_project_resource_fails_for_bob(base_url: str, world: World) -> None:
    async with http_client(base_url, world.bob_token) as client:
        for uris in RESOURCE_READS.values():
            for uri in uris(world):
                with pytest.raises(MCPError) as refused:
                    await client.read_resource(uri)
                assert_no_alice_data(world, str(refused.value), asked_with=uri)


async def test_alice_still_reads_her_document_over_mcp(base_url: str, world: World) -> None:
    async with http_client(base_url, world.alice_token) as client:
        result = await client.call_tool(
            "read_document", {"document": ALICE_DOCUMENT, "project": ALICE_PROJECT}
        )

    assert not result.is_error, text_of(result)
    assert "heliotrope" in text_of(result)


async def test_bobs_write_tools_left_nothing_in_alices_projects(
    base_url: str, world: World
) -> None:
    async with http_client(base_url, world.bob_token) as client:
        for arguments in TOOL_CALLS["add_document"](world) + TOOL_CALLS["request_document"](world):
            name = "add_document" if "content" in arguments else "request_document"
            assert (await client.call_tool(name, arguments)).is_error, arguments
    async with http_client(base_url, world.alice_token) as client:
        research = await client.call_tool("list_documents", {"project": ALICE_PROJECT})
        default = await client.call_tool("list_documents", {"project": "default"})
    async with AsyncTestClient(app=create_app(world.settings)) as rest:
        requests = await rest.get(
            f"/api/projects/{world.alice_project_id}/requests", headers=bearer(world.alice_token)
        )

    names = [d["name"] for d in research.structured_content["documents"]]
    assert names == [ALICE_DOCUMENT]
    assert default.structured_content["documents"] == []
    logged = requests.json()["requests"]
    assert [(r["title"], r["times_requested"]) for r in logged] == [(ALICE_REQUEST_TITLE, 1)]
