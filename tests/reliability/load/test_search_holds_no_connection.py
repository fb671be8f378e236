"""Issue #13, item 2: one token's searches cannot starve everyone else of database connections.

A search reads what it needs on a short-lived pooled connection and gives it
back before ranking; the rate limit is spent before any connection is taken.
Here ranking takes real time: the app reranks with Cohere pointed at the local
stand-in (tests/support/cohere_standin.py), which holds each answer for
``STALL`` seconds. One token sends 30 searches at once (20 over REST, 10 as MCP
``search_documents`` calls) while another user keeps listing projects, the pool at its default size (10); the pool timeout is
shortened so a starved request fails quickly instead of after 5 s.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest

from service.settings import DatabaseSettings
from tests.browser.live_service import run_service
from tests.integration.documents.conftest import bearer, new_user
from tests.reliability.faults.seeding import QUERY, SeededProject, seeded_project
from tests.support.cohere_standin import CohereStandin

pytestmark = pytest.mark.anyio

SEARCHES = 30
#: Of the SEARCHES, how many are MCP tool calls (the rest go to the REST route).
MCP_SEARCHES = 10
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
#: Seconds the stand-in holds each rerank answer: the time each search spends ranking.
STALL = 3.0
POOL_TIMEOUT = 1.0


@pytest.fixture(scope="module")
def corpus(
    server_url: str, template_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SeededProject]:
    with seeded_project(server_url, template_database, tmp_path_factory.mktemp("pool")) as seed:
        yield seed


async def test_thirty_concurrent_searches_from_one_token_leave_connections_for_everyone_else(
    corpus: SeededProject, tmp_path: Path
) -> None:
    pool_size = DatabaseSettings().pool_max_size
    assert pool_size < SEARCHES  # the default pool cannot lend one to each search
    bob = await new_user(corpus.db_url, "bob")
    with CohereStandin() as standin:
        standin.set_mode("stall", stall_seconds=STALL)
        service = run_service(
            corpus.db_url,
            tmp_path,
            cohere_api_key="test-key",
            search={
                "reranker": "cohere",
                "cohere_base_url": standin.url,
                "cohere_max_retries": 0,
                "rerank_timeout": STALL + 5,
            },
            database={"pool_timeout": POOL_TIMEOUT},
            server={"run_worker": False},
        )
        with service as base_url:
            async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
                searches: list[httpx.Response] = []
                tool_calls: list[httpx.Response] = []
                listings: list[httpx.Response] = []
                done = anyio.Event()

                async def search() -> None:
                    searches.append(
                        await client.post(
                            f"/api/projects/{corpus.project_id}/search",
                            json={"query": QUERY},
                            headers=bearer(corpus.token),
                        )
                    )

                async def mcp_search(number: int) -> None:
                    call = {
                        "jsonrpc": "2.0",
                        "id": number,
                        "method": "tools/call",
                        "params": {"name": "search_documents", "arguments": {"query": QUERY}},
                    }
                    tool_calls.append(
                        await client.post(
                            "/mcp", json=call, headers={**MCP_HEADERS, **bearer(corpus.token)}
                        )
                    )

                async def searches_at_once() -> None:
                    async with anyio.create_task_group() as group:
                        for number in range(SEARCHES):
                            if number < MCP_SEARCHES:
                                group.start_soon(mcp_search, number)
                            else:
                                group.start_soon(search)
                    done.set()

                async def keep_listing() -> None:
                    while not done.is_set():
                        listings.append(
                            await client.get("/api/projects", headers=bearer(bob.token))
                        )
                        await anyio.sleep(0.1)

                started = time.monotonic()
                async with anyio.create_task_group() as group:
                    group.start_soon(searches_at_once)
                    group.start_soon(keep_listing)
                elapsed = time.monotonic() - started

    # The other user was answered all along (a starved request is 503 after POOL_TIMEOUT)...
    assert len(listings) >= 5
    statuses = [response.status_code for response in listings]
    assert statuses == [200] * len(listings), [r.text for r in listings if r.status_code != 200][:3]
    # ...and so was every search of the busy token,
    rest_searches = SEARCHES - MCP_SEARCHES
    assert [response.status_code for response in searches] == [200] * rest_searches, [
        response.text for response in searches if response.status_code != 200
    ][:3]
    assert all(response.json()["results"] for response in searches)
    assert [response.status_code for response in tool_calls] == [200] * MCP_SEARCHES
    results = [response.json()["result"] for response in tool_calls]
    assert [result.get("isError", False) for result in results] == [False] * MCP_SEARCHES, [
        result["content"][0]["text"] for result in results if result.get("isError")
    ][:3]
    assert all(result["structuredContent"]["results"] for result in results)
    # while ranking really took time, more searches at once than the pool has connections.
    # (Not all 30 reach the stand-in: its small listen backlog resets some; they use BM25.)
    assert elapsed >= STALL
    assert standin.calls > pool_size
