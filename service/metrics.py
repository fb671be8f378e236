"""Prometheus metrics: what happens is counted where it happens; state is read at scrape time.

Counters and histograms live in this module, process-wide, and are fed by one call at each
place something happens (:class:`RequestMetricsMiddleware` for HTTP, :func:`record_search`
in the search service, :func:`record_job` in the job queue). Gauges of state (the pool,
the warm-up backlog, the extraction queue, the reranker's circuit) are read from the
runtime when ``GET /metrics`` is scraped (:func:`scrape`), so they are never stale.

Metric names start with ``shortlist_``; a sample scrape is in ``docs/deploy.md``.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Literal

from litestar.enums import ScopeType
from prometheus_client import (
    CollectorRegistry,
    Counter,
    Histogram,
    disable_created_metrics,
    generate_latest,
)
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from retrieval.rerankers import GuardedReranker
from service.services import warmup
from service.storage.db import connection, fetch_all

if TYPE_CHECKING:
    from litestar.types import ASGIApp, Message, Receive, Scope, Send

    from retrieval import SearchResult
    from service.runtime import Runtime

disable_created_metrics()  # type: ignore[no-untyped-call]  # no ``*_created`` series: they double every scrape for nothing

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
"""The Prometheus text exposition format."""

SearchOutcome = Literal["reranked", "partly_ranked", "bm25_only", "fallback"]

_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)

HTTP_REQUESTS = Counter(
    "shortlist_http_requests",
    "HTTP requests answered, by method, route template and status.",
    ["method", "route", "status"],
    registry=None,
)
HTTP_SECONDS = Histogram(
    "shortlist_http_request_duration_seconds",
    "Time from a request's arrival to the end of its answer, by method, route and status.",
    ["method", "route", "status"],
    buckets=_LATENCY_BUCKETS,
    registry=None,
)
SEARCH_STAGE_SECONDS = Histogram(
    "shortlist_search_stage_seconds",
    "Time one search spent in each stage: load (database), chunk, bm25, rerank.",
    ["stage"],
    buckets=_LATENCY_BUCKETS,
    registry=None,
)
SEARCHES = Counter(
    "shortlist_searches",
    "Searches answered, by reranker and outcome (reranked: every candidate scored; "
    "partly_ranked: some left to BM25; bm25_only: no reranker; fallback: the reranker failed).",
    ["reranker", "outcome"],
    registry=None,
)
EXTRACTION_JOBS = Counter(
    "shortlist_extraction_jobs",
    "Extraction jobs this process ran, by outcome (ready, error: the file cannot be searched, "
    "skipped, retried, failed: gave up after every attempt).",
    ["outcome"],
    registry=None,
)

_COUNTED = (HTTP_REQUESTS, HTTP_SECONDS, SEARCH_STAGE_SECONDS, SEARCHES, EXTRACTION_JOBS)


def search_outcome(result: SearchResult) -> SearchOutcome:
    """How a search was ranked, in the words of the ``shortlist_searches`` metric."""
    if result.ranking != "bm25_order":
        return result.ranking
    if result.reranker == "none":
        return "bm25_only"
    return "fallback"


def record_search(result: SearchResult, *, load_seconds: float) -> None:
    """Count one search and where its time went."""
    stages = result.stage_seconds
    for stage, seconds in (
        ("load", load_seconds),
        ("chunk", stages.chunk),
        ("bm25", stages.bm25),
        ("rerank", stages.rerank),
    ):
        SEARCH_STAGE_SECONDS.labels(stage).observe(seconds)
    SEARCHES.labels(result.reranker, search_outcome(result)).inc()


def record_job(outcome: str) -> None:
    """Count one extraction job's end: ``ready``, ``error``, ``skipped``, ``retried``, ``failed``."""
    EXTRACTION_JOBS.labels(outcome).inc()


class RequestMetricsMiddleware:
    """Counts and times each request of a matched route (unmatched paths are not counted)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        method = str(scope.get("method", ""))
        started = time.perf_counter()
        status = 500

        async def counting_send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            labels = (method, str(scope.get("path_template", "")), str(status))
            HTTP_REQUESTS.labels(*labels).inc()
            HTTP_SECONDS.labels(*labels).observe(time.perf_counter() - started)


class _Snapshot:
    """The runtime's state at one scrape, as gauge families."""

    def __init__(self, families: list[Metric]) -> None:
        self.families = families

    def collect(self) -> Iterator[Metric]:
        yield from self.families


def _gauge(name: str, documentation: str, value: float, **labels: str) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=list(labels))
    family.add_metric(list(labels.values()), value)
    return family


async def _state(runtime: Runtime, queue: str) -> list[Metric]:
    stats = runtime.pool.get_stats()
    size, idle = stats.get("pool_size", 0), stats.get("pool_available", 0)
    pool = GaugeMetricFamily(
        "shortlist_db_pool_connections", "Open pooled connections, by state.", labels=["state"]
    )
    pool.add_metric(["in_use"], size - idle)
    pool.add_metric(["idle"], idle)
    families: list[Metric] = [
        pool,
        _gauge(
            "shortlist_db_pool_max_connections",
            "Most connections the pool may open.",
            runtime.pool.max_size,
        ),
        _gauge(
            "shortlist_db_pool_waiting_requests",
            "Requests waiting for a pooled connection.",
            stats.get("requests_waiting", 0),
        ),
    ]
    totals = warmup.summary(runtime.search.warmup)
    families += [
        _gauge(
            "shortlist_warmup_backlog_passages",
            "Passages of queued projects the reranker has not prepared yet (this process).",
            max(totals.passages_total - totals.passages_warm, 0),
        ),
        _gauge(
            "shortlist_warmup_projects_warming",
            "Projects queued or being warmed in this process.",
            totals.projects_warming,
        ),
    ]
    async with connection(runtime.pool) as conn:
        rows = await fetch_all(conn, "count_queued_jobs", queue=queue)
    counts = {str(row["status"]): int(row["jobs"]) for row in rows}
    jobs = GaugeMetricFamily(
        "shortlist_extraction_queue_jobs",
        "Extraction jobs in the queue (all workers), by status: todo (waiting), doing.",
        labels=["status"],
    )
    for status in ("todo", "doing"):
        jobs.add_metric([status], counts.get(status, 0))
    families.append(jobs)
    reranker = runtime.search.reranker
    if isinstance(reranker, GuardedReranker):
        circuit = GaugeMetricFamily(
            "shortlist_reranker_circuit_state",
            "The reranker's circuit breaker: 1 for its current state.",
            labels=["reranker", "state"],
        )
        current = reranker.breaker.state
        for state in ("closed", "open", "half_open"):
            circuit.add_metric([reranker.name, state], 1.0 if state == current else 0.0)
        families.append(circuit)
    return families


_PROCESS_COLLECTORS: list[Any] = [
    ProcessCollector(registry=None),
    PlatformCollector(registry=None),
    GCCollector(registry=CollectorRegistry()),  # registered below, per scrape
]


async def scrape(runtime: Runtime, *, queue: str) -> bytes:
    """The Prometheus text of every metric: counted ones, the process's, and the state now."""
    registry = CollectorRegistry(auto_describe=False)
    for collector in (*_COUNTED, *_PROCESS_COLLECTORS):
        registry.register(collector)
    registry.register(_Snapshot(await _state(runtime, queue)))
    return generate_latest(registry)
