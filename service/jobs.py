"""Extraction as durable jobs on PostgreSQL, with procrastinate.

One job per document (``queueing_lock`` and ``lock`` ``extract:<id>``, so a
document is never queued twice nor extracted twice at once). Workers run inside
``shortlist serve`` by default and as ``shortlist worker`` processes for scale;
any number of them share one database.

A maintenance task, deferred every 15 seconds by whichever worker is up,
keeps the promise that no document stays ``pending`` forever:

- jobs whose worker stopped sending heartbeats (it was killed) are retried;
- a pending document whose job was lost is queued again;
- a document stuck longer than ``jobs.stale_after_seconds`` is marked failed;
- upload grants never registered (``storage.abandoned_upload_after_seconds``
  after they expired) have their bytes or unfinished parts removed.

A job that fails for a transient reason (database or blob store away) is
retried with exponential backoff up to ``jobs.max_attempts``; the last failure
marks the document ``error`` with ``extraction_failed``.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING
from uuid import UUID

import anyio.to_thread
import procrastinate
from procrastinate.exceptions import AlreadyEnqueued

from service.services import extraction, uploads
from service.storage.db import RECONNECT_WINDOW_SECONDS, connection, fetch_all

if TYPE_CHECKING:
    from procrastinate.job_context import JobContext

    from service.runtime import Runtime
    from service.settings import Settings

logger = logging.getLogger(__name__)

EXTRACTION_QUEUE = "extraction"
MAINTENANCE_QUEUE = "maintenance"
EXTRACT_TASK = "shortlist.extract_document"
#: Seconds a pending document may wait for its first job before it is queued again.
REQUEUE_GRACE_SECONDS = 60
#: Seconds without a heartbeat after which a worker counts as dead.
STALLED_WORKER_SECONDS = 30.0

tasks = procrastinate.Blueprint()


@tasks.task(name=EXTRACT_TASK, queue=EXTRACTION_QUEUE, pass_context=True)
async def extract_document(context: JobContext, document_id: str) -> None:
    runtime: Runtime = context.additional_context["runtime"]
    attempts = runtime.settings.jobs.max_attempts
    try:
        await extraction.extract_stored_document(runtime, UUID(document_id))
    except Exception as exc:
        attempt = context.job.attempts + 1
        if attempt < attempts:
            logger.warning(
                "extraction of %s failed (attempt %d of %d): %s",
                document_id,
                attempt,
                attempts,
                exc,
            )
            raise
        logger.error(
            "extraction of %s failed for good after %d attempts: %s", document_id, attempt, exc
        )
        async with connection(runtime.pool) as conn:
            await extraction.save_failure(
                conn,
                UUID(document_id),
                "extraction_failed",
                "Extraction kept failing (storage or database trouble); re-extract the document to try again.",
            )


@tasks.periodic(cron="* * * * * */15")
@tasks.task(
    name="shortlist.sweep",
    queue=MAINTENANCE_QUEUE,
    queueing_lock="shortlist.sweep",
    pass_context=True,
)
async def sweep(context: JobContext, timestamp: int) -> None:
    runtime: Runtime = context.additional_context["runtime"]
    await runtime.jobs.sweep(runtime)


class Jobs:
    """The queue as the rest of the service sees it: enqueue, run workers, sweep."""

    def __init__(self, url: str, settings: Settings) -> None:
        self.settings = settings
        connector = procrastinate.PsycopgConnector(
            conninfo=url, min_size=1, max_size=4, reconnect_timeout=RECONNECT_WINDOW_SECONDS
        )
        self.app = procrastinate.App(connector=connector)
        self.app.add_tasks_from(tasks, namespace="")
        retry = procrastinate.RetryStrategy(
            max_attempts=settings.jobs.max_attempts,
            exponential_wait=settings.jobs.retry_backoff_base,
        )
        self.app.tasks[EXTRACT_TASK].retry_strategy = retry

    async def open(self) -> None:
        await self.app.open_async()

    async def close(self) -> None:
        await self.app.close_async()

    async def enqueue_extraction(self, document_id: UUID) -> None:
        """Queue the document's extraction unless a job for it is already waiting."""
        lock = f"extract:{document_id}"
        try:
            await self.app.configure_task(EXTRACT_TASK, queueing_lock=lock, lock=lock).defer_async(
                document_id=str(document_id)
            )
        except AlreadyEnqueued:
            logger.debug("extraction of %s is already queued", document_id)

    async def run_worker(self, runtime: Runtime, *, name: str = "shortlist-worker") -> None:
        """Process jobs until cancelled."""
        await anyio.to_thread.run_sync(runtime.sandboxes.warm)
        await self.app.run_worker_async(
            queues=[EXTRACTION_QUEUE, MAINTENANCE_QUEUE],
            name=name,
            concurrency=self.settings.jobs.concurrency,
            install_signal_handlers=False,
            additional_context={"runtime": runtime},
            stalled_worker_timeout=STALLED_WORKER_SECONDS,
            update_heartbeat_interval=5.0,
            wait=True,
        )

    async def run_worker_forever(self, runtime: Runtime, *, name: str = "shortlist-worker") -> None:
        """Process jobs until cancelled, starting the worker again if it stops on an error
        (a database outage stops procrastinate's worker; it must come back by itself)."""
        while True:
            try:
                await self.run_worker(runtime, name=name)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("the extraction worker stopped; starting it again in 2 s")
            await asyncio.sleep(2.0)

    async def sweep(self, runtime: Runtime) -> None:
        manager = self.app.job_manager
        for job in await manager.get_stalled_jobs():
            logger.warning("retrying job %s of a worker that stopped", job.id)
            await manager.retry_job(job)
        async with connection(runtime.pool) as conn:
            orphans = await fetch_all(
                conn, "list_unqueued_pending_documents", grace_seconds=REQUEUE_GRACE_SECONDS
            )
            for row in orphans:
                logger.warning("queueing lost extraction of document %s again", row["id"])
                await self.enqueue_extraction(row["id"])
            failed = await fetch_all(
                conn, "fail_stale_documents", seconds=self.settings.jobs.stale_after_seconds
            )
            for row in failed:
                logger.error("document %s was stuck in extraction and is marked failed", row["id"])
            swept = await uploads.sweep_abandoned_uploads(runtime, conn)
            if swept:
                logger.info("swept %d upload grants that were never registered", swept)
