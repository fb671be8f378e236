"""The sweep resumes what a dead worker started and never fails what waits in line."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg.rows import dict_row

from service.jobs import sweep_interval
from service.runtime import Runtime, open_runtime
from service.services import users
from service.storage.blobs import LocalBlobStore
from service.storage.db import connection
from sql import queries
from tests.conftest import make_settings
from tests.integration.documents.conftest import make_pdf

pytestmark = pytest.mark.anyio

SMALL_PDF = make_pdf(["Moraines mark where a glacier once stood."])
DEAD_AFTER = 3


async def _add_document(runtime: Runtime, project_id: UUID, name: str, data: bytes) -> UUID:
    key = f"projects/{project_id}/uploads/{name}"
    await asyncio.to_thread(runtime.blobs.write, key, data, "application/pdf")
    async with connection(runtime.pool) as conn:
        row = await (
            await conn.execute(
                queries["insert_document"],
                {
                    "project_id": project_id,
                    "name": name,
                    "content_type": "application/pdf",
                    "size_bytes": len(data),
                    "object_key": key,
                    "status": "pending",
                    "sync_path": None,
                    "original_sha256": None,
                    "sync_size": None,
                    "sync_mtime_ns": None,
                },
            )
        ).fetchone()
    assert row is not None
    document_id: UUID = row["id"]
    await runtime.jobs.enqueue_extraction(document_id)
    return document_id


async def _statuses(db_url: str, ids: list[UUID]) -> dict[UUID, dict[str, Any]]:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        rows = await (
            await conn.execute(
                "SELECT id, status, error_code FROM documents WHERE id = ANY(%s)", (ids,)
            )
        ).fetchall()
    return {row["id"]: row for row in rows}


async def test_a_document_waiting_in_line_longer_than_the_timeouts_is_not_failed_and_ends_ready(
    db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(db_url, tmp_path, jobs={"dead_worker_after_seconds": DEAD_AFTER})
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            alice = await users.create_user(conn, "alice")
        waiting = await _add_document(runtime, alice.project.id, "waiting.pdf", SMALL_PDF)
        async with connection(runtime.pool) as conn:
            # It has been in line for two hours, far past any timeout the service knows.
            await conn.execute(
                "UPDATE documents SET created_at = now() - interval '2 hours',"
                " updated_at = now() - interval '2 hours' WHERE id = %s",
                (waiting,),
            )
        # No worker is free meanwhile; sweeps keep running for longer than the timeout.
        seen = []
        started = time.monotonic()
        while time.monotonic() - started < DEAD_AFTER + sweep_interval(DEAD_AFTER):
            await runtime.jobs.sweep(runtime)
            seen.append((await _statuses(db_url, [waiting]))[waiting]["status"])
            await asyncio.sleep(sweep_interval(DEAD_AFTER))
        async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
            job = await (
                await conn.execute(
                    "SELECT status, attempts FROM procrastinate_jobs WHERE args->>'document_id' = %s",
                    (str(waiting),),
                )
            ).fetchone()

        worker = asyncio.create_task(runtime.jobs.run_worker(runtime, name="in-line-test"))
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                final = (await _statuses(db_url, [waiting]))[waiting]
                if final["status"] in ("ready", "error"):
                    break
                await asyncio.sleep(0.2)
        finally:
            worker.cancel()
            with pytest.raises(asyncio.CancelledError):
                await worker

    assert set(seen) == {"pending"}
    assert job == ("todo", 0), "a queued job is left in line, untouched"
    assert final["status"] == "ready", final


async def test_a_stalled_extraction_that_used_every_attempt_fails_its_document(
    db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(
        db_url, tmp_path, jobs={"dead_worker_after_seconds": DEAD_AFTER, "max_attempts": 2}
    )
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            alice = await users.create_user(conn, "alice")
        document_id = await _add_document(runtime, alice.project.id, "doomed.pdf", SMALL_PDF)
        async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
            # Its second attempt ran on a worker that is gone (the row was pruned).
            await conn.execute(
                "UPDATE procrastinate_jobs SET status = 'doing', attempts = 1, worker_id = NULL"
                " WHERE args->>'document_id' = %s",
                (str(document_id),),
            )
            await conn.execute(
                "UPDATE documents SET status = 'processing' WHERE id = %s", (document_id,)
            )
        await runtime.jobs.sweep(runtime)
        async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
            job = await (
                await conn.execute(
                    "SELECT status FROM procrastinate_jobs WHERE args->>'document_id' = %s",
                    (str(document_id),),
                )
            ).fetchone()
        document = (await _statuses(db_url, [document_id]))[document_id]

    assert job == ("failed",)
    assert document["status"] == "error"
    assert document["error_code"] == "extraction_stalled"


async def _job_of(db_url: str, document_id: UUID) -> tuple[str, int] | None:
    async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
        row = await (
            await conn.execute(
                "SELECT status::text, attempts FROM procrastinate_jobs"
                " WHERE args->>'document_id' = %s",
                (str(document_id),),
            )
        ).fetchone()
    return (row[0], row[1]) if row else None


def _release(fifo: Path, within: float = 10.0) -> None:
    """Give the reader blocked on ``fifo`` the PDF, waiting for it to open the pipe."""
    deadline = time.monotonic() + within
    while fifo.exists():
        try:
            descriptor = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:  # no reader yet
            if time.monotonic() > deadline:
                return
            time.sleep(0.05)
            continue
        try:
            os.write(descriptor, SMALL_PDF)
        finally:
            os.close(descriptor)
        fifo.unlink()


async def test_a_dead_workers_job_resumes_while_every_extraction_slot_is_busy(
    db_url: str, tmp_path: Path
) -> None:
    """The sweep used to be a job on the extraction worker: with its slots busy (here the
    only one, on an original that does not finish reading) it did not run at all."""
    settings = make_settings(
        db_url, tmp_path, jobs={"dead_worker_after_seconds": DEAD_AFTER, "concurrency": 1}
    )
    async with open_runtime(settings) as runtime:
        assert isinstance(runtime.blobs, LocalBlobStore)
        async with connection(runtime.pool) as conn:
            alice = await users.create_user(conn, "alice")
        busy = await _add_document(runtime, alice.project.id, "busy.pdf", SMALL_PDF)
        # Its original is a FIFO: reading it blocks until the test writes, holding the slot.
        fifo = runtime.blobs.path_for(f"projects/{alice.project.id}/uploads/busy.pdf")
        fifo.unlink()
        os.mkfifo(fifo)
        orphan = await _add_document(runtime, alice.project.id, "orphan.pdf", SMALL_PDF)
        async with await psycopg.AsyncConnection.connect(db_url, autocommit=True) as conn:
            # Started by a worker that was killed (and pruned: no worker row any more).
            await conn.execute(
                "UPDATE procrastinate_jobs SET status = 'doing', worker_id = NULL"
                " WHERE args->>'document_id' = %s",
                (str(orphan),),
            )
        worker = asyncio.create_task(runtime.jobs.run_worker(runtime, name="busy-test"))
        try:
            deadline = time.monotonic() + 60
            while (await _statuses(db_url, [busy]))[busy]["status"] != "processing":
                assert time.monotonic() < deadline, "the busy document was never started"
                await asyncio.sleep(0.1)
            started = time.monotonic()
            resumed_after = None
            while time.monotonic() - started < 30:
                job = await _job_of(db_url, orphan)
                if job is not None and job[1] >= 1:
                    resumed_after = time.monotonic() - started
                    break
                await asyncio.sleep(0.1)
            busy_still = (await _statuses(db_url, [busy]))[busy]["status"]
            _release(fifo)  # let the busy one finish
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                rows = await _statuses(db_url, [busy, orphan])
                if all(row["status"] in ("ready", "error") for row in rows.values()):
                    break
                await asyncio.sleep(0.2)
        finally:
            _release(fifo)
            worker.cancel()
            with pytest.raises(asyncio.CancelledError):
                await worker

    assert busy_still == "processing", "the slot was busy all along"
    assert resumed_after is not None and resumed_after < sweep_interval(DEAD_AFTER) + 6
    assert {row["status"] for row in rows.values()} == {"ready"}, rows
