"""``GET /metrics``, scraped from a live service the way Prometheus would: off by default,
behind its token when one is set, and counting what the service did."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from prometheus_client.parser import text_string_to_metric_families

from service.runtime import open_runtime
from service.services import users
from service.settings import Settings
from service.storage.db import connection
from tests.conftest import make_settings
from tests.integration.mcp.conftest import live_app
from tests.support.cohere_standin import CohereStandin

METRICS_TOKEN = "scrape-" + "x" * 24


def _samples(text: str) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, []).append(sample)
    return found


def _value(samples: dict[str, list[Any]], name: str, **labels: str) -> float:
    return sum(
        s.value
        for s in samples.get(name, [])
        if all(s.labels.get(k) == v for k, v in labels.items())
    )


def test_metrics_are_off_unless_enabled(settings: Settings) -> None:
    with live_app(settings) as url:
        assert httpx.get(f"{url}/metrics", timeout=30).status_code == 404


def test_a_scrape_counts_requests_searches_jobs_and_shows_the_state(
    db_url: str, tmp_path: Path
) -> None:
    with CohereStandin() as standin:
        settings = make_settings(
            db_url,
            tmp_path,
            cohere_api_key="test-key",
            search={"reranker": "cohere", "cohere_base_url": standin.url},
            metrics={"enabled": True, "token": METRICS_TOKEN},
        )
        token, project_id = _create_user(settings)
        with live_app(settings) as url:
            refused = httpx.get(f"{url}/metrics", timeout=30)
            wrong = httpx.get(f"{url}/metrics", headers={"Authorization": "Bearer no"}, timeout=30)
            with httpx.Client(
                base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
            ) as api:
                _wait_ready(api, _upload(api, project_id, b"# Tides\n\nHigh water at noon.\n"))
                searched = api.post(
                    f"/api/projects/{project_id}/search", json={"query": "high water"}
                )
                assert searched.status_code == 200, searched.text
            scraped = httpx.get(
                f"{url}/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}, timeout=30
            )

    assert refused.status_code == 401 and refused.json()["code"] == "not_authenticated"
    assert wrong.status_code == 401
    assert scraped.status_code == 200
    assert scraped.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples = _samples(scraped.text)
    search_route = "/api/projects/{project_id}/search"
    assert _value(samples, "shortlist_http_requests_total", route=search_route, status="200") == 1
    assert (
        _value(
            samples,
            "shortlist_http_request_duration_seconds_count",
            route=search_route,
            method="POST",
        )
        == 1
    )
    for stage in ("load", "chunk", "bm25", "rerank"):
        assert _value(samples, "shortlist_search_stage_seconds_count", stage=stage) >= 1, stage
    assert _value(samples, "shortlist_searches_total", reranker="cohere", outcome="reranked") >= 1
    assert _value(samples, "shortlist_extraction_jobs_total", outcome="ready") >= 1
    assert _value(samples, "shortlist_extraction_queue_jobs", status="todo") == 0
    assert _value(samples, "shortlist_db_pool_max_connections") == settings.database.pool_max_size
    assert _value(samples, "shortlist_db_pool_connections", state="idle") >= 0
    assert "shortlist_warmup_backlog_passages" in samples
    assert _value(samples, "shortlist_reranker_circuit_state", state="closed") == 1
    assert _value(samples, "shortlist_reranker_circuit_state", state="open") == 0
    assert "process_cpu_seconds_total" in samples


def _create_user(settings: Settings) -> tuple[str, str]:
    async def create() -> tuple[str, str]:
        async with (
            open_runtime(settings, background=False) as runtime,
            connection(runtime.pool) as conn,
        ):
            made = await users.create_user(conn, "erin")
        return made.token, str(made.project.id)

    return asyncio.run(create())


def _upload(api: httpx.Client, project_id: str, data: bytes) -> str:
    """Grant, PUT to the local store (on this service), register: the document's id."""
    grant = api.post(
        "/api/uploads", json={"project_id": project_id, "filename": "tides.md", "size": len(data)}
    ).json()
    parts = urlsplit(grant["url"])
    api.put(f"{parts.path}?{parts.query}", content=data, headers=grant["headers"])
    registered = api.post(
        "/api/documents", json={"project_id": project_id, "upload_id": grant["upload_id"]}
    )
    assert registered.status_code == 201, registered.text
    document_id: str = registered.json()["id"]
    return document_id


def _wait_ready(api: httpx.Client, document_id: str, within: float = 60) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        status = api.get(f"/api/documents/{document_id}").json()["status"]
        if status in ("ready", "error"):
            assert status == "ready"
            return
        time.sleep(0.2)
    raise AssertionError("the upload was not extracted in time")
