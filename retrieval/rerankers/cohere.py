"""Rerank through Cohere's hosted rerank API (``POST /v2/rerank``) with the official SDK.

Every call is bounded by the caller's deadline. The SDK's own retry loop
sleeps without looking at any deadline, so it is switched off
(``max_retries=0``) and retries happen here: on HTTP 429, 5xx and connection
errors, with exponential backoff and jitter (honouring ``Retry-After``), and
never when the wait would run past the deadline. Each attempt runs in a worker
thread that is waited on for at most the time left, so a server that trickles
bytes cannot hold a query past its deadline either (httpx's timeout is per read,
not per request). A :class:`CircuitBreaker` skips calls for a cooldown after
repeated failures so a dead API does not cost every query its full timeout.

Nothing here raises for a network or API failure: the answer is then BM25 order
with ``reranked=False`` and a warning that names the cause.
"""

from __future__ import annotations

import concurrent.futures
import math
import random
import threading
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

import cohere
import httpx
from cohere.core.api_error import ApiError

from retrieval.rerankers.circuit import CircuitBreaker
from retrieval.rerankers.fallback import bm25_order
from retrieval.types import Candidate, RerankResult

if TYPE_CHECKING:
    from collections.abc import Mapping

DEFAULT_MODEL = "rerank-v4.0-fast"
DEFAULT_BASE_URL = "https://api.cohere.com"


class _Failure(NamedTuple):
    """Why one attempt failed, and whether trying again may help."""

    cause: str
    """Short cause for the warning, e.g. ``"HTTP 429"`` or ``"malformed reply"``."""
    retryable: bool
    retry_after: float | None = None
    """Seconds the server asked us to wait (``Retry-After``), when it said."""


class CohereReranker:
    """Scores every candidate with Cohere's relevance model (``top_n`` = all candidates)."""

    name = "cohere"

    def __init__(
        self,
        api_key: str,
        *,
        model: str = DEFAULT_MODEL,
        base_url: str = DEFAULT_BASE_URL,
        timeout: float = 10.0,
        max_retries: int = 2,
        max_tokens_per_doc: int = 4096,
        backoff_initial: float = 0.25,
        backoff_max: float = 2.0,
        failure_threshold: int = 5,
        cooldown: float = 30.0,
        max_concurrent_calls: int = 8,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """
        Args:
            api_key: Cohere API key, sent as ``Authorization: Bearer ...``.
            timeout: Upper bound for one attempt, in seconds; the deadline can shorten it.
            max_retries: Retries after the first attempt on 429, 5xx and connection errors.
            backoff_initial: First backoff delay; doubles each retry, capped at ``backoff_max``.
            failure_threshold: Consecutive failed queries that open the circuit.
            cooldown: Seconds the open circuit skips calls before letting one through.
            max_concurrent_calls: Worker threads for in-flight HTTP calls.
            clock: The circuit breaker's clock, in seconds (tests pass a fake one).
        """
        if timeout <= 0:
            raise ValueError("timeout must be positive")
        if max_retries < 0:
            raise ValueError("max_retries must not be negative")
        self.model = model
        self.base_url = base_url
        self.timeout = timeout
        self.max_retries = max_retries
        self.max_tokens_per_doc = max_tokens_per_doc
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.breaker = CircuitBreaker(
            failure_threshold=failure_threshold, cooldown=cooldown, clock=clock
        )
        self._http = httpx.Client(timeout=timeout)
        self._client = cohere.ClientV2(
            api_key=api_key,
            base_url=base_url,
            timeout=timeout,
            max_retries=0,
            httpx_client=self._http,
        )
        self._calls = concurrent.futures.ThreadPoolExecutor(
            max_workers=max_concurrent_calls, thread_name_prefix="cohere-rerank"
        )
        self._jitter = random.Random()  # noqa: S311 - backoff jitter, not cryptography
        self._jitter_lock = threading.Lock()

    def close(self) -> None:
        """Stop the worker threads and close the HTTP connections."""
        self._calls.shutdown(wait=False, cancel_futures=True)
        self._http.close()

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        if not candidates:
            return RerankResult(scores=[], reranked=False)
        wait = self.breaker.seconds_until_retry()
        if wait > 0:
            failures = self.breaker.consecutive_failures
            return bm25_order(
                candidates,
                f"cohere: circuit open after {failures} failure{'' if failures == 1 else 's'}; "
                f"retrying in {math.ceil(wait)} s",
            )
        documents = [candidate.text for candidate in candidates]
        retries = 0
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return self._give_up(candidates, "deadline passed before the call", retries)
            attempt_timeout = min(self.timeout, remaining)
            outcome = self._attempt(query, documents, attempt_timeout)
            if not isinstance(outcome, _Failure):
                self.breaker.record_success()
                # Cohere's relevance scores are already absolute, in [0, 1].
                return RerankResult(scores=outcome, reranked=True, relevance=tuple(outcome))
            if not outcome.retryable or retries >= self.max_retries:
                return self._give_up(candidates, outcome.cause, retries)
            delay = self._backoff(retries, outcome.retry_after)
            if time.monotonic() + delay >= deadline:
                return self._give_up(
                    candidates, outcome.cause, retries, note="no time left to retry"
                )
            time.sleep(delay)
            retries += 1

    def _attempt(
        self, query: str, documents: list[str], attempt_timeout: float
    ) -> list[float] | _Failure:
        """One HTTP call, waited on for at most ``attempt_timeout`` seconds."""
        future = self._calls.submit(self._call, query, documents, attempt_timeout)
        try:
            return future.result(timeout=attempt_timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            return _Failure(f"timed out after {attempt_timeout:.1f} s", retryable=False)
        except RuntimeError as error:  # the pool was shut down by close()
            return _Failure(f"unavailable ({error})", retryable=False)

    def _call(
        self, query: str, documents: list[str], attempt_timeout: float
    ) -> list[float] | _Failure:
        try:
            reply = self._client.rerank(
                model=self.model,
                query=query,
                documents=documents,
                top_n=len(documents),
                max_tokens_per_doc=self.max_tokens_per_doc,
                request_options={"timeout": attempt_timeout, "max_retries": 0},
            )
        except httpx.TimeoutException:
            return _Failure(f"timed out after {attempt_timeout:.1f} s", retryable=False)
        except httpx.TransportError as error:
            return _Failure(f"connection failed ({type(error).__name__})", retryable=True)
        except ApiError as error:
            return _failure_from_status(error.status_code, error.headers)
        except Exception as error:  # the SDK's parsing errors, pydantic's, anything else
            return _Failure(f"malformed reply ({type(error).__name__})", retryable=False)
        return _scores_in_candidate_order(
            [(item.index, item.relevance_score) for item in reply.results], len(documents)
        )

    def _backoff(self, retries: int, retry_after: float | None) -> float:
        """Exponential backoff with jitter; a server's ``Retry-After`` wins when larger."""
        ceiling = min(self.backoff_max, self.backoff_initial * 2.0**retries)
        with self._jitter_lock:
            delay = ceiling * (0.5 + 0.5 * self._jitter.random())
        if retry_after is not None:
            delay = max(delay, retry_after)
        return delay

    def _give_up(
        self, candidates: Sequence[Candidate], cause: str, retries: int, *, note: str = ""
    ) -> RerankResult:
        self.breaker.record_failure()
        warning = f"cohere: {cause}"
        if retries:
            warning += f" after {retries} {'retry' if retries == 1 else 'retries'}"
        if note:
            warning += f"; {note}"
        return bm25_order(candidates, warning)


def _failure_from_status(status: int | None, headers: Mapping[str, str] | None) -> _Failure:
    if status is not None and 200 <= status < 300:
        return _Failure("malformed reply", retryable=False)  # the SDK could not decode the body
    retryable = status is not None and (status == 429 or status >= 500)
    cause = f"HTTP {status}"
    if status in (401, 403):
        cause += " (check the Cohere API key)"
    return _Failure(cause, retryable=retryable, retry_after=_retry_after(headers))


def _retry_after(headers: Mapping[str, str] | None) -> float | None:
    if not headers:
        return None
    value = {name.lower(): text for name, text in headers.items()}.get("retry-after")
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None  # an HTTP date; exponential backoff is good enough then


def _scores_in_candidate_order(
    results: list[tuple[int, float]], count: int
) -> list[float] | _Failure:
    """Cohere answers in score order; put the scores back in candidate order.

    With ``top_n`` = all candidates, every index must come back exactly once;
    anything else is treated as a malformed reply rather than guessed at.
    """
    scores: list[float | None] = [None] * count
    for index, score in results:
        if not 0 <= index < count or scores[index] is not None:
            return _Failure("malformed reply (bad result index)", retryable=False)
        scores[index] = float(score)
    complete = [score for score in scores if score is not None]
    if len(complete) != count:
        return _Failure(
            f"malformed reply (scored {len(complete)} of {count} candidates)", retryable=False
        )
    return complete
