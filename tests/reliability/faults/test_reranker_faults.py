"""Promise 3: a failing reranker degrades search to BM25 order; it never fails or stalls it.

The real app runs with ``reranker = "cohere"`` pointed at a local HTTP stand-in
of Cohere's rerank API (tests/support/cohere_standin.py), which the real Cohere
SDK talks to over real connections. Each test gets a fresh app (so a fresh
circuit breaker) over one module-wide database holding three ready documents.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from litestar.testing import AsyncTestClient

from retrieval.rerankers.circuit import CircuitBreaker
from service.app import create_app
from tests.conftest import make_settings
from tests.integration.documents.conftest import bearer
from tests.reliability.faults.seeding import QUERY, SeededProject, seeded_project
from tests.support.cohere_standin import CohereStandin

pytestmark = pytest.mark.anyio

RERANK_TIMEOUT = 1.5
#: Slack on top of the rerank deadline for BM25, JSON and the test client (a bound, not a target).
SLACK = 1.5
API_KEY = "test-key"


@pytest.fixture(scope="module")
def corpus(
    server_url: str, template_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SeededProject]:
    with seeded_project(server_url, template_database, tmp_path_factory.mktemp("rerank")) as seed:
        yield seed


@pytest.fixture
def standin() -> Iterator[CohereStandin]:
    with CohereStandin() as server:
        yield server


@asynccontextmanager
async def running_app(
    corpus: SeededProject,
    reranker: str,
    standin: CohereStandin | None = None,
    retries: int = 2,
    **search_settings: Any,
) -> AsyncIterator[Any]:
    search: dict[str, Any] = {"reranker": reranker, "rerank_timeout": RERANK_TIMEOUT}
    if standin is not None:
        search.update(cohere_base_url=standin.url, cohere_max_retries=retries)
    search.update(search_settings)
    settings = make_settings(
        corpus.db_url,
        corpus.data_dir,
        cohere_api_key=API_KEY,
        search=search,
        server={"run_worker": False},
    )
    async with AsyncTestClient(app=create_app(settings)) as client:
        yield client


async def timed_search(client: Any, corpus: SeededProject) -> tuple[float, dict[str, Any]]:
    started = time.monotonic()
    response = await client.post(
        f"/api/projects/{corpus.project_id}/search",
        json={"query": QUERY},
        headers=bearer(corpus.token),
    )
    elapsed = time.monotonic() - started
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return elapsed, body


def ranking(body: dict[str, Any]) -> list[str]:
    return [hit["chunk_id"] for hit in body["results"]]


@pytest.fixture(scope="module")
def bm25_ranking(corpus: SeededProject) -> list[str]:
    async def search() -> list[str]:
        async with running_app(corpus, "none") as client:
            _, body = await timed_search(client, corpus)
        assert body["reranked"] is False
        return ranking(body)

    order = asyncio.run(search())
    assert len(order) == 3, "every seeded document should match the query"
    return order


@pytest.mark.parametrize(
    ("mode", "cause", "calls"),
    [
        ("500", "HTTP 500", 3),
        ("429", "HTTP 429", 3),
        ("garbage", "malformed reply", 1),
        ("stall", "timed out", 1),
    ],
)
async def test_a_failing_reranker_gives_bm25_order_within_the_deadline_and_says_why(
    corpus: SeededProject,
    standin: CohereStandin,
    bm25_ranking: list[str],
    mode: str,
    cause: str,
    calls: int,
) -> None:
    standin.set_mode(mode, stall_seconds=10.0, retry_after=0.0)
    async with running_app(corpus, "cohere", standin, retries=2) as client:
        elapsed, body = await timed_search(client, corpus)

    assert elapsed < RERANK_TIMEOUT + SLACK, f"{mode}: search took {elapsed:.2f} s"
    assert body["reranker"] == "cohere"
    assert body["reranked"] is False
    assert ranking(body) == bm25_ranking
    assert any(cause in warning for warning in body["warnings"]), body["warnings"]
    # Retryable failures (429, 5xx) are tried 1 + cohere_max_retries times; others once.
    assert standin.calls == calls


async def test_a_healthy_reranker_reranks_and_receives_the_api_key(
    corpus: SeededProject, standin: CohereStandin
) -> None:
    async with running_app(corpus, "cohere", standin) as client:
        _, body = await timed_search(client, corpus)

    assert body["reranked"] is True
    assert body["warnings"] == []
    assert standin.calls == 1
    assert standin.requests[0].headers["authorization"] == f"Bearer {API_KEY}"
    assert standin.requests[0].body["query"] == QUERY


async def test_a_long_retry_after_is_not_waited_for_past_the_deadline(
    corpus: SeededProject, standin: CohereStandin, bm25_ranking: list[str]
) -> None:
    standin.set_mode("429", retry_after=30.0)
    async with running_app(corpus, "cohere", standin, retries=5) as client:
        elapsed, body = await timed_search(client, corpus)

    assert elapsed < RERANK_TIMEOUT + SLACK
    assert body["reranked"] is False
    assert ranking(body) == bm25_ranking
    assert any("no time left to retry" in warning for warning in body["warnings"])
    assert standin.calls == 1


async def test_the_circuit_opens_after_repeated_failures_and_stops_calling_the_reranker(
    corpus: SeededProject, standin: CohereStandin, bm25_ranking: list[str]
) -> None:
    standin.set_mode("500")
    async with running_app(corpus, "cohere", standin, retries=0) as client:
        for _ in range(5):  # CohereReranker's failure_threshold
            await timed_search(client, corpus)
        assert standin.calls == 5

        standin.set_mode("ok")  # recovered, but the cooldown (30 s) has not passed
        for _ in range(3):
            elapsed, body = await timed_search(client, corpus)
            assert body["reranked"] is False
            assert ranking(body) == bm25_ranking
            assert any("circuit open" in warning for warning in body["warnings"])
            assert elapsed < SLACK, "an open circuit answers without waiting on the reranker"

    assert standin.calls == 5


async def test_the_circuit_follows_its_settings_and_closes_after_the_cooldown(
    corpus: SeededProject, standin: CohereStandin, bm25_ranking: list[str]
) -> None:
    standin.set_mode("500")
    async with running_app(
        corpus,
        "cohere",
        standin,
        retries=0,
        cohere_failure_threshold=2,
        cohere_cooldown_seconds=600.0,
    ) as client:
        reranker = client.app.state.runtime.search.reranker
        settled = reranker.breaker
        assert (settled.failure_threshold, settled.cooldown) == (2, 600.0), "from the settings"
        clock = StepClock()
        reranker.breaker = CircuitBreaker(
            failure_threshold=settled.failure_threshold, cooldown=settled.cooldown, clock=clock
        )
        for _ in range(3):
            await timed_search(client, corpus)
        assert standin.calls == 2, "the circuit opened after two failed queries"

        standin.set_mode("ok")
        clock.now += 599.0
        _, still_open = await timed_search(client, corpus)
        clock.now += 1.0  # the cooldown has passed
        _, body = await timed_search(client, corpus)

    assert still_open["reranked"] is False
    assert standin.calls == 3
    assert body["reranked"] is True


class StepClock:
    """A clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now
