"""Extraction as durable jobs on PostgreSQL, with procrastinate.

One job per document (``queueing_lock`` and ``lock`` ``extract:<id>``, so a
document is never queued twice nor extracted twice at once). Workers run inside
``shortlist serve`` by default and as ``shortlist worker`` processes for scale;
any number of them share one database.

Each worker process runs two procrastinate workers: one takes extraction jobs,
the other only the maintenance queue, so the sweep never waits behind a backlog
of extractions (nor for one of their slots). The sweep is deferred every third
of ``jobs.dead_worker_after_seconds`` (at most every 15 s) by whichever worker
is up, and keeps the promise that no document stays ``pending`` forever:

- a job started by a worker that stopped sending heartbeats for
  ``jobs.dead_worker_after_seconds`` (it was killed) is retried, so its document
  resumes elsewhere; one that already used its ``jobs.max_attempts`` marks its
  document failed (``extraction_stalled``). Waiting in line is never staleness:
  a queued job is left alone however long the backlog;
- a pending document whose job was lost is queued again;
- upload grants never registered, or whose document was deleted
  (``storage.abandoned_upload_after_seconds`` after they expired), have their
  bytes or unfinished parts removed.

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
from procrastinate.exceptions import AlreadyEnqueued, ConnectorException, UniqueViolation
from procrastinate.jobs import Status

from service import logs, metrics
from service.services import extraction, prefilter, uploads
from service.storage.db import RECONNECT_WINDOW_SECONDS, connection, fetch_all

if TYPE_CHECKING:
    from procrastinate.job_context import JobContext
    from procrastinate.jobs import Job

    from service.runtime import Runtime
    from service.settings import Settings

logger = logging.getLogger(__name__)

EXTRACTION_QUEUE = "extraction"
MAINTENANCE_QUEUE = "maintenance"
EXTRACT_TASK = "shortlist.extract_document"
SWEEP_TASK = "shortlist.sweep"
#: Seconds a pending document may wait for its first job before it is queued again.
REQUEUE_GRACE_SECONDS = 60
#: Longest a stopping worker is waited for before it is given up.
WORKER_STOP_SECONDS = 5.0
#: Longest pause between two sweeps.
MAX_SWEEP_INTERVAL_SECONDS = 15


async def extract_document(
    context: JobContext, document_id: str, request_id: str | None = None
) -> None:
    """Extract one document; ``request_id`` is the request that queued it, for its logs."""
    logs.request_id.set(request_id)
    runtime: Runtime = context.additional_context["runtime"]
    attempts = runtime.settings.jobs.max_attempts
    try:
        outcome = await extraction.extract_stored_document(runtime, UUID(document_id))
    except Exception as exc:
        attempt = context.job.attempts + 1
        if attempt < attempts:
            metrics.record_job("retried")
            logger.warning(
                "extraction of %s failed (attempt %d of %d): %s",
                document_id,
                attempt,
                attempts,
                exc,
            )
            raise
        metrics.record_job("failed")
        logger.error(
            "extraction of %s failed for good after %d attempts: %s", document_id, attempt, exc
        )
        async with connection(runtime.pool) as conn:
            await extraction.save_failure(
                conn,
                UUID(document_id),
                extraction.FAILED_CODE,
                "Extraction kept failing (storage or database trouble); re-extract the document to try again.",
            )
        return
    metrics.record_job(outcome.status)


async def sweep(context: JobContext, timestamp: int) -> None:
    runtime: Runtime = context.additional_context["runtime"]
    await runtime.jobs.sweep(runtime)


def sweep_interval(dead_worker_after_seconds: int) -> int:
    """Seconds between sweeps: a third of the dead-worker timeout, 1 to 15 s, so a dead
    worker's jobs resume soon after it counts as dead."""
    return max(1, min(MAX_SWEEP_INTERVAL_SECONDS, dead_worker_after_seconds // 3))


def heartbeat_interval(dead_worker_after_seconds: int) -> float:
    """Seconds between a worker's heartbeats: several fit in the dead-worker timeout."""
    return max(0.5, dead_worker_after_seconds / 6)


class Jobs:
    """The queue as the rest of the service sees it: enqueue, run workers, sweep."""

    def __init__(self, url: str, settings: Settings) -> None:
        self.settings = settings
        connector = procrastinate.PsycopgConnector(
            # Two workers per process, each holding a connection to listen on.
            conninfo=url,
            min_size=1,
            max_size=6,
            reconnect_timeout=RECONNECT_WINDOW_SECONDS,
        )
        self.app = procrastinate.App(connector=connector)
        # Each app registers its own Task objects: procrastinate binds a task to the app that
        # registered it last, so tasks shared between apps (a module-level Blueprint) would
        # defer through whichever app was made last, closed or not, in a process with two.
        retry = procrastinate.RetryStrategy(
            max_attempts=settings.jobs.max_attempts,
            exponential_wait=settings.jobs.retry_backoff_base,
        )
        self.app.task(name=EXTRACT_TASK, queue=EXTRACTION_QUEUE, pass_context=True, retry=retry)(
            extract_document
        )
        sweep_task = self.app.task(
            name=SWEEP_TASK, queue=MAINTENANCE_QUEUE, queueing_lock=SWEEP_TASK, pass_context=True
        )(sweep)
        every = sweep_interval(settings.jobs.dead_worker_after_seconds)
        self.app.periodic(cron=f"* * * * * */{every}")(sweep_task)

    async def open(self) -> None:
        await self.app.open_async()

    async def close(self) -> None:
        await self.app.close_async()

    async def enqueue_extraction(self, document_id: UUID) -> None:
        """Queue the document's extraction unless a job for it is already waiting."""
        lock = f"extract:{document_id}"
        try:
            await self.app.configure_task(EXTRACT_TASK, queueing_lock=lock, lock=lock).defer_async(
                document_id=str(document_id), request_id=logs.request_id.get()
            )
        except AlreadyEnqueued:
            logger.debug("extraction of %s is already queued", document_id)

    async def run_worker(self, runtime: Runtime, *, name: str = "shortlist-worker") -> None:
        """Process jobs until the procrastinate workers stop (a database outage stops them) or
        this is cancelled: extractions on one worker, the maintenance sweep on its own, so a
        backlog of extractions never delays it, and the lexical backfill beside them, which
        ends with them so that :meth:`run_worker_forever` can start all three again."""
        await anyio.to_thread.run_sync(runtime.sandboxes.warm)
        async with asyncio.TaskGroup() as group:
            backfill = group.create_task(
                prefilter.backfill_forever(runtime), name=f"{name}-lexical-backfill"
            )
            try:
                async with asyncio.TaskGroup() as workers:
                    workers.create_task(
                        self._run_one_worker(
                            runtime, EXTRACTION_QUEUE, name, self.settings.jobs.concurrency
                        )
                    )
                    workers.create_task(
                        self._run_one_worker(runtime, MAINTENANCE_QUEUE, f"{name}-sweep", 1)
                    )
            finally:
                backfill.cancel()  # it never ends by itself

    async def _run_one_worker(
        self, runtime: Runtime, queue: str, name: str, concurrency: int
    ) -> None:
        dead_after = self.settings.jobs.dead_worker_after_seconds
        running = asyncio.ensure_future(
            self._procrastinate_worker(runtime, queue, name, concurrency, dead_after)
        )
        try:
            await asyncio.shield(running)
        except asyncio.CancelledError:
            # procrastinate stops its worker gracefully on a cancel, but one cancelled while it
            # was still starting may wait for ever: cancel it again until it is gone, within
            # a bound, so a shutdown always ends.
            loop = asyncio.get_running_loop()
            deadline = loop.time() + WORKER_STOP_SECONDS
            while not running.done() and loop.time() < deadline:
                running.cancel()
                await asyncio.wait({running}, timeout=0.25)
            raise

    async def _procrastinate_worker(
        self, runtime: Runtime, queue: str, name: str, concurrency: int, dead_after: int
    ) -> None:
        await self.app.run_worker_async(
            queues=[queue],
            name=name,
            concurrency=concurrency,
            install_signal_handlers=False,
            additional_context={"runtime": runtime},
            stalled_worker_timeout=dead_after,
            update_heartbeat_interval=heartbeat_interval(dead_after),
            # A retried job is not announced; it is picked up at the next poll.
            fetch_job_polling_interval=min(5.0, float(sweep_interval(dead_after))),
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
        await self.resume_jobs_of_dead_workers(runtime)
        async with connection(runtime.pool) as conn:
            orphans = await fetch_all(
                conn, "list_unqueued_pending_documents", grace_seconds=REQUEUE_GRACE_SECONDS
            )
            for row in orphans:
                logger.warning("queueing lost extraction of document %s again", row["id"])
                await self.enqueue_extraction(row["id"])
            swept = await uploads.sweep_abandoned_uploads(runtime, conn)
            if swept:
                logger.info("swept %d upload grants that were never registered", swept)

    async def resume_jobs_of_dead_workers(self, runtime: Runtime) -> None:
        """Retry the jobs that were started by a worker now gone (no heartbeat for
        ``jobs.dead_worker_after_seconds``); an extraction that already had all its
        attempts fails its document instead. Jobs still queued are never touched."""
        manager = self.app.job_manager
        stalled = await manager.get_stalled_jobs(
            seconds_since_heartbeat=self.settings.jobs.dead_worker_after_seconds
        )
        for job in stalled:
            try:
                await self._settle_stalled_job(runtime, job)
            except UniqueViolation:
                # The document was queued again meanwhile (re-extract): that job does it.
                await manager.finish_job(job, status=Status.FAILED, delete_job=False)
            except ConnectorException as exc:
                # Another sweep settled it first (two may overlap on a slow database).
                logger.warning("could not settle stalled job %s: %s", job.id, exc)

    async def _settle_stalled_job(self, runtime: Runtime, job: Job) -> None:
        manager = self.app.job_manager
        if job.task_name != EXTRACT_TASK:
            # A sweep that died with its worker: the next one is already scheduled.
            await manager.finish_job(job, status=Status.FAILED, delete_job=False)
        elif job.attempts + 1 >= self.settings.jobs.max_attempts:
            await self._fail_stalled_extraction(runtime, job)
        else:
            logger.warning("resuming job %s of a worker that stopped", job.id)
            await manager.retry_job(job)

    async def _fail_stalled_extraction(self, runtime: Runtime, job: Job) -> None:
        metrics.record_job("failed")
        attempts = job.attempts + 1
        document_id = UUID(str(job.task_kwargs["document_id"]))
        logger.error(
            "document %s: its worker stopped during each of %d attempts; marked failed",
            document_id,
            attempts,
        )
        # The document first: should finishing the job fail, the next sweep finds it again.
        async with connection(runtime.pool) as conn:
            await extraction.save_failure(
                conn,
                document_id,
                "extraction_stalled",
                f"The worker extracting this document stopped during each of {attempts} "
                "attempts (killed or out of memory); re-extract the document to try again.",
            )
        await self.app.job_manager.finish_job(job, status=Status.FAILED, delete_job=False)
