"""One search rule set, whichever door: REST and MCP agree on ids, limits and defaults.

Both doors call ``service.services.search.search_project``; these tests send the
same request through each and compare the answers.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import httpx
import pytest

from service.mcp import render
from service.mcp.server import build_server
from service.services.search import MAX_SEARCH_DOCUMENTS
from tests.conftest import make_settings
from tests.integration.mcp.conftest import QUOKKA, Library, http_client, text_of

pytestmark = pytest.mark.anyio


async def rest_search(base_url: str, library: Library, body: dict[str, Any]) -> httpx.Response:
    async with httpx.AsyncClient(base_url=base_url, timeout=30) as client:
        return await client.post(
            f"/api/projects/{library.ids['research']}/search",
            json=body,
            headers={"Authorization": f"Bearer {library.alice_token}"},
        )


async def mcp_search(base_url: str, library: Library, arguments: dict[str, Any]) -> Any:
    async with http_client(base_url, library.alice_token) as client:
        return await client.call_tool(
            "search_documents", {"project": library.ids["research"], **arguments}
        )


@pytest.mark.parametrize(
    ("documents", "status", "code"),
    [
        (lambda ids: [ids["bob-private.md"]], 404, "document_not_found"),  # another user's
        (lambda ids: [ids["notes.md"]], 404, "document_not_found"),  # alice's, another project
        (lambda ids: [str(uuid.uuid4())], 404, "document_not_found"),  # nobody's
        (lambda ids: [ids["report.pdf"], ids["broken.pdf"]], 409, "document_not_ready"),
    ],
    ids=["another-users", "another-project", "unknown", "not-ready"],
)
async def test_rest_and_mcp_refuse_the_same_document_ids_with_the_same_code(
    base_url: str, library: Library, documents: Any, status: int, code: str
) -> None:
    chosen = documents(library.ids)

    rest = await rest_search(base_url, library, {"query": QUOKKA, "document_ids": chosen})
    mcp = await mcp_search(base_url, library, {"query": QUOKKA, "documents": chosen})

    assert rest.status_code == status, rest.text
    assert rest.json()["code"] == code
    assert mcp.is_error, text_of(mcp)
    assert mcp.structured_content["error"]["code"] == code
    assert f"(error: {code})" in text_of(mcp)
    assert "results" not in rest.json()


async def test_rest_and_mcp_search_the_same_allowed_documents_alike(
    base_url: str, library: Library
) -> None:
    chosen = [library.ids["report.pdf"]]

    rest = await rest_search(
        base_url, library, {"query": QUOKKA, "document_ids": chosen, "top_k": 2}
    )
    mcp = await mcp_search(base_url, library, {"query": QUOKKA, "documents": chosen, "top_k": 2})

    assert rest.status_code == 200, rest.text
    assert not mcp.is_error, text_of(mcp)
    rest_hits = [(hit["chunk_id"], hit["pages"]) for hit in rest.json()["results"]]
    mcp_hits = [(hit["chunk_id"], hit["pages"]) for hit in mcp.structured_content["results"]]
    assert rest_hits == mcp_hits
    assert rest_hits[0][1] == [3, 3]
    # One response model: MCP's structured content is REST's body without the passage text.
    body = rest.json()
    for hit in body["results"]:
        del hit["text"]
    assert mcp.structured_content == body
    assert body["sources"][0]["first_page"] == 3
    assert body["project"] == {"id": library.ids["research"], "name": "research"}


async def test_top_k_over_the_setting_is_refused_alike_and_none_means_the_default(
    base_url: str, library: Library
) -> None:
    limit = library.settings.search.max_top_k

    rest = await rest_search(base_url, library, {"query": "tides", "top_k": limit + 1})
    mcp = await mcp_search(base_url, library, {"query": "tides", "top_k": limit + 1})

    assert rest.status_code == 400, rest.text
    assert rest.json()["code"] == "invalid_request"
    assert f"between 1 and {limit}" in rest.json()["message"]
    assert mcp.structured_content["error"]["code"] == "invalid_request"
    assert f"between 1 and {limit}" in text_of(mcp)


async def test_the_mcp_top_k_argument_is_described_from_the_search_settings(
    tmp_path: Path,
) -> None:
    settings = make_settings(
        "postgresql://unused@127.0.0.1:1/unused",
        tmp_path,
        search={"reranker": "none", "default_top_k": 5, "max_top_k": 20},
    )

    tools = {tool.name: tool for tool in await build_server(lambda _: None, settings).list_tools()}  # type: ignore[arg-type, return-value]

    top_k = tools["search_documents"].input_schema["properties"]["top_k"]
    assert top_k["default"] is None
    assert "1-20" in top_k["description"]
    assert "default 5" in top_k["description"]
    assert "50" not in top_k["description"]


async def test_too_many_documents_are_refused_alike_before_any_is_looked_up(
    base_url: str, library: Library
) -> None:
    chosen = [str(uuid.uuid4()) for _ in range(MAX_SEARCH_DOCUMENTS + 1)]

    rest = await rest_search(base_url, library, {"query": "tides", "document_ids": chosen})
    mcp = await mcp_search(base_url, library, {"query": "tides", "documents": chosen})

    assert rest.status_code == 400, rest.text
    assert rest.json()["code"] == "invalid_request"
    assert f"at most {MAX_SEARCH_DOCUMENTS} documents" in rest.json()["message"]
    assert mcp.structured_content["error"]["code"] == "invalid_request"
    assert f"at most {MAX_SEARCH_DOCUMENTS} documents" in text_of(mcp)


async def test_rest_and_mcp_search_say_how_many_documents_could_not_be_searched(
    base_url: str, library: Library
) -> None:
    """research holds report.pdf (ready) and broken.pdf (failed): both doors say one was left
    out, in the words find_mentions uses; a search of named documents leaves none out."""
    rest = await rest_search(base_url, library, {"query": QUOKKA})
    mcp = await mcp_search(base_url, library, {"query": QUOKKA})
    restricted = await mcp_search(
        base_url, library, {"query": QUOKKA, "documents": [library.ids["report.pdf"]]}
    )
    async with http_client(base_url, library.alice_token) as client:
        mentions = await client.call_tool(
            "find_mentions", {"terms": QUOKKA, "project": library.ids["research"]}
        )
        default = await client.call_tool("search_documents", {"query": "lighthouse"})

    assert rest.status_code == 200, rest.text
    assert rest.json()["documents_not_searchable"] == 1
    assert not mcp.is_error, text_of(mcp)
    assert mcp.structured_content["documents_not_searchable"] == 1
    note = render.not_searchable_note(1)
    assert note is not None and "list_documents" in note
    assert mcp.content[0].text.endswith(note)  # the passages' text; links and pictures follow
    assert note in text_of(mentions)
    assert restricted.structured_content["documents_not_searchable"] == 0
    assert note not in text_of(restricted)
    assert default.structured_content["documents_not_searchable"] == 0
    assert "not searched" not in text_of(default)
