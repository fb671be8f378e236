"""CohereReranker through the real cohere SDK, over HTTP, against the local stand-in."""

from __future__ import annotations

import hashlib
import socket
import time
from collections.abc import Iterator

import pytest

from retrieval.rerankers.cohere import CohereReranker
from retrieval.types import Candidate
from tests.support.cohere_standin import CohereStandin, relevance, start_cohere_standin

QUERY = "insulin resistance in obese mice"
TEXTS = [
    "Cardiac output during exercise in athletes.",  # best BM25, unrelated
    "Gut bacteria and weight gain.",
    "Insulin resistance develops in obese mice fed a high fat diet.",  # most overlap
    "Obese patients and insulin therapy.",
]
SLACK = 0.5
"""Seconds allowed past the deadline for thread hand-off on a loaded machine."""


def _candidates() -> list[Candidate]:
    return [
        Candidate(hashlib.sha256(text.encode()).hexdigest(), text, float(len(TEXTS) - rank))
        for rank, text in enumerate(TEXTS)
    ]


@pytest.fixture
def standin() -> Iterator[CohereStandin]:
    server = start_cohere_standin()
    yield server
    server.stop()


def _reranker(standin: CohereStandin, **settings: float) -> CohereReranker:
    options: dict[str, float] = {
        "timeout": 2.0,
        "backoff_initial": 0.01,
        "backoff_max": 0.05,
        "failure_threshold": 50,
    }
    options.update(settings)
    return CohereReranker("test-key", base_url=standin.url, **options)  # type: ignore[arg-type]


@pytest.fixture
def reranker(standin: CohereStandin) -> Iterator[CohereReranker]:
    client = _reranker(standin)
    yield client
    client.close()


def test_scores_are_the_service_relevance_scores_in_candidate_order(
    reranker: CohereReranker,
) -> None:
    candidates = _candidates()
    result = reranker.rerank(QUERY, candidates, deadline=time.monotonic() + 5)
    assert result.reranked
    assert result.warnings == ()
    assert result.scores == [relevance(QUERY, c.text) for c in candidates]
    assert max(range(len(candidates)), key=result.scores.__getitem__) == 2
    # Cohere's scores are already absolute: they are the relevance as they are.
    assert result.relevance == tuple(result.scores)


def test_request_carries_key_model_token_limit_and_all_documents(standin: CohereStandin) -> None:
    client = CohereReranker(
        "secret-123", base_url=standin.url, model="rerank-test", max_tokens_per_doc=512
    )
    candidates = _candidates()
    client.rerank(QUERY, candidates, deadline=time.monotonic() + 5)
    client.close()
    (request,) = standin.requests
    assert request.path == "/v2/rerank"
    assert request.headers["authorization"] == "Bearer secret-123"
    assert request.body["model"] == "rerank-test"
    assert request.body["max_tokens_per_doc"] == 512
    assert request.body["top_n"] == len(candidates)
    assert request.body["documents"] == [c.text for c in candidates]
    assert request.body["query"] == QUERY


def test_empty_candidate_list_gives_empty_result_without_a_call(
    standin: CohereStandin, reranker: CohereReranker
) -> None:
    result = reranker.rerank(QUERY, [], deadline=time.monotonic() + 5)
    assert result.scores == []
    assert not result.reranked
    assert standin.calls == 0


@pytest.mark.parametrize(
    ("mode", "cause"),
    [
        ("500", "cohere: HTTP 500"),
        ("429", "cohere: HTTP 429"),
        ("garbage", "cohere: malformed reply"),
        ("stall", "cohere: timed out after"),
    ],
)
def test_failure_gives_bm25_order_and_a_warning_before_the_deadline(
    standin: CohereStandin, reranker: CohereReranker, mode: str, cause: str
) -> None:
    standin.set_mode(mode, stall_seconds=10, retry_after=0)
    candidates = _candidates()
    budget = 1.0
    started = time.monotonic()
    result = reranker.rerank(QUERY, candidates, deadline=started + budget)
    elapsed = time.monotonic() - started
    assert elapsed < budget + SLACK
    assert not result.reranked
    assert result.scores == [c.bm25 for c in candidates]
    assert len(result.warnings) == 1
    assert result.warnings[0].startswith(cause)


def test_server_errors_are_retried_a_bounded_number_of_times(standin: CohereStandin) -> None:
    standin.set_mode("500")
    client = _reranker(standin, max_retries=2)
    result = client.rerank(QUERY, _candidates(), deadline=time.monotonic() + 5)
    client.close()
    assert standin.calls == 3
    assert result.warnings == ("cohere: HTTP 500 after 2 retries",)


def test_bad_reply_is_not_retried(standin: CohereStandin, reranker: CohereReranker) -> None:
    standin.set_mode("garbage")
    reranker.rerank(QUERY, _candidates(), deadline=time.monotonic() + 5)
    assert standin.calls == 1


def test_retry_after_beyond_the_deadline_gives_up_instead_of_waiting(
    standin: CohereStandin, reranker: CohereReranker
) -> None:
    standin.set_mode("429", retry_after=30)
    started = time.monotonic()
    result = reranker.rerank(QUERY, _candidates(), deadline=started + 1.0)
    assert time.monotonic() - started < 1.0
    assert standin.calls == 1
    assert result.warnings == ("cohere: HTTP 429; no time left to retry",)


def test_flaky_service_recovers_within_the_retries(standin: CohereStandin) -> None:
    standin.set_mode("flaky", failures=2)
    client = _reranker(standin, max_retries=2)
    candidates = _candidates()
    result = client.rerank(QUERY, candidates, deadline=time.monotonic() + 5)
    client.close()
    assert result.reranked
    assert result.scores == [relevance(QUERY, c.text) for c in candidates]
    assert standin.calls == 3


def test_unreachable_service_gives_connection_warning() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nothing listens there
    client = CohereReranker(
        "k", base_url=f"http://127.0.0.1:{port}", max_retries=1, backoff_initial=0.01
    )
    candidates = _candidates()
    result = client.rerank(QUERY, candidates, deadline=time.monotonic() + 2)
    client.close()
    assert not result.reranked
    assert result.scores == [c.bm25 for c in candidates]
    assert result.warnings == ("cohere: connection failed (ConnectError) after 1 retry",)


def test_circuit_opens_after_repeated_failures_and_stops_calling(standin: CohereStandin) -> None:
    standin.set_mode("500")
    client = _reranker(standin, max_retries=0, failure_threshold=3, cooldown=60)
    for _ in range(3):
        client.rerank(QUERY, _candidates(), deadline=time.monotonic() + 5)
    assert standin.calls == 3
    for _ in range(5):
        result = client.rerank(QUERY, _candidates(), deadline=time.monotonic() + 5)
        assert not result.reranked
        assert result.warnings[0].startswith("cohere: circuit open after 3 failures; retrying in")
    client.close()
    assert standin.calls == 3


def test_circuit_lets_a_call_through_after_the_cooldown(standin: CohereStandin) -> None:
    standin.set_mode("500")
    now = [1000.0]
    client = CohereReranker(
        "test-key",
        base_url=standin.url,
        timeout=2.0,
        max_retries=0,
        failure_threshold=1,
        cooldown=30.0,
        clock=lambda: now[0],
    )
    client.rerank(QUERY, _candidates(), deadline=time.monotonic() + 5)
    skipped = client.rerank(QUERY, _candidates(), deadline=time.monotonic() + 5)
    assert skipped.warnings[0].startswith("cohere: circuit open after 1 failure;")
    standin.set_mode("ok")
    now[0] += 29.0
    still_open = client.rerank(QUERY, _candidates(), deadline=time.monotonic() + 5)
    assert not still_open.reranked
    assert standin.calls == 1
    now[0] += 1.0
    result = client.rerank(QUERY, _candidates(), deadline=time.monotonic() + 5)
    client.close()
    assert result.reranked
    assert standin.calls == 2
