"""Warm-up progress through the API: the first search warms its project; health and status say so."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path
from typing import Any

import anyio
import psycopg
import pytest
from litestar.testing import AsyncTestClient
from psycopg.rows import dict_row

from service.app import create_app
from service.services import users
from tests.conftest import make_settings
from tests.support.paths import SCIFACT_DIR

pytestmark = pytest.mark.anyio


async def _new_user(db_url: str, name: str) -> users.NewUser:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        return await users.create_user(conn, name)


async def _add_abstracts(db_url: str, created: users.NewUser, count: int) -> None:
    """Ready documents written straight to the table: no extraction, no NOTIFY, no warm-up."""
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for _, line in zip(range(count), lines, strict=False)]
    async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
        for row in rows:
            markdown = f"<!-- page 1 -->\n# {row['title']}\n\n{row['text']}\n"
            await conn.execute(
                "INSERT INTO documents (project_id, name, content_type, size_bytes, status,"
                " markdown, content_hash, kind, page_count, extracted_at)"
                " VALUES (%s, %s, 'text/markdown', %s, 'ready', %s, %s, 'text', 1, now())",
                (
                    created.project.id,
                    f"{row['_id']}.md",
                    len(markdown),
                    markdown,
                    hashlib.sha256(markdown.encode()).hexdigest(),
                ),
            )


async def _after_start_up_read_the_table(_: Any) -> None:
    """``create_app``'s ``on_start``: the app starts serving only once its start-up warm-up
    (the ``warm-at-start`` task, queued just before) has read the documents table."""
    for task in asyncio.all_tasks():  # a task that has finished is no longer listed
        if task.get_name() == "warm-at-start":
            await task


async def test_status_and_health_report_the_first_search_warming_its_project(
    db_url: str, tmp_path: Path
) -> None:
    created = await _new_user(db_url, "alice")
    settings = make_settings(
        db_url,
        tmp_path,
        search={"reranker": "local", "local_embed_budget": 0.0},
        server={"run_worker": False},
    )
    headers = {"Authorization": f"Bearer {created.token}"}
    project = str(created.project.id)
    app = create_app(settings, on_start=_after_start_up_read_the_table)
    async with AsyncTestClient(app=app) as client:
        runtime: Any = client.app.state.runtime
        await _add_abstracts(db_url, created, 12)  # after start-up read the (empty) table

        found = await client.post(
            f"/api/projects/{project}/search", json={"query": "cancer"}, headers=headers
        )
        assert found.status_code == 200, found.text
        body = found.json()
        assert body["unscored"] == body["candidates"] > 0, "no budget: nothing scored yet"

        assert await anyio.to_thread.run_sync(runtime.search.warmup.wait_idle, 120)
        status = (await client.get("/api/status", headers=headers)).json()
        health = (await client.get("/api/health")).json()
        again = (
            await client.post(
                f"/api/projects/{project}/search", json={"query": "cancer"}, headers=headers
            )
        ).json()

    (entry,) = status["projects"]
    assert entry["project_id"] == project
    assert entry["state"] == "warm"
    assert entry["passages_warm"] == entry["passages_total"] >= 12
    assert health["warmup"] == {
        "projects_warming": 0,
        "passages_warm": entry["passages_total"],
        "passages_total": entry["passages_total"],
    }
    assert again["unscored"] == 0
    assert again["reranked"] is True


async def test_status_lists_only_the_callers_projects_cold_until_queued(
    db_url: str, tmp_path: Path
) -> None:
    alice = await _new_user(db_url, "alice")
    await _new_user(db_url, "bob")
    settings = make_settings(db_url, tmp_path, server={"run_worker": False})
    async with AsyncTestClient(app=create_app(settings)) as client:
        response = await client.get(
            "/api/status", headers={"Authorization": f"Bearer {alice.token}"}
        )
    assert response.status_code == 200
    assert response.json() == {
        "projects": [
            {
                "project_id": str(alice.project.id),
                "state": "cold",
                "passages_warm": 0,
                "passages_total": 0,
            }
        ]
    }
