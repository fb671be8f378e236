"""Background warm-up of the search caches: queries first, one project at a time.

A cold search is slow because the local reranker must embed passages it has
no vectors for (see :mod:`retrieval.rerankers.local`). This module fills the
in-memory caches ahead of queries, without ever competing with one:

* **Queries first.** :meth:`Warmup.query` marks a search in progress; the
  warm-up thread waits while any is, and between small batches of work
  (:attr:`Warmup.batch_size` passages, or a few documents to chunk), so a
  query waits for at most one batch of one thread. That thread runs at a lower
  OS priority (``nice``), and the reranker's warm-up session uses one
  onnxruntime thread, so a core stays free for queries.
* **What will be searched, first.** A project's search queues its documents
  ("search"), a newly extracted document queues itself ("upload"), start-up
  queues the most recently extracted documents ("recent"). The worker takes
  the best reason first, then the most recently used project, and warms one
  project at a time; a better job arriving preempts the current one between
  batches (what is done stays done: the caches are keyed by content).
* **Said.** :meth:`Warmup.progress` reports passages warm / total per project,
  summed over every document of the project a job has reached (not only the last
  job's): totals in ``GET /api/health``, the caller's projects in ``GET /api/status``.
* **Tied to the caches.** A search of a project whose last search warm-up covered the
  same documents queues nothing, but only while neither cache has evicted anything
  since that warm-up began (:attr:`ChunkIndex.evictions`, the reranker's
  ``evictions``): after an eviction the next search warms the project again.

The thread is a daemon and stops at :meth:`Warmup.close` after its current
batch: a one-shot command never waits for it (and the CLI does not start it).
Nothing here is persisted; after a restart the caches start empty.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, NamedTuple
from uuid import UUID

import psycopg
from psycopg import sql as pgsql
from psycopg.rows import dict_row

from retrieval.errors import DocumentNotIndexed
from retrieval.rerankers import CrossLingualReranker, WarmableReranker
from retrieval.types import DocumentRef, SourceDocument
from service.services import prefilter, projects
from service.services.extraction import READY_CHANNEL
from service.storage.db import Connection, fetch_all

if TYPE_CHECKING:
    from retrieval import ChunkIndex
    from retrieval.rerankers import Reranker
    from service.storage.db import Connection, Pool

logger = logging.getLogger(__name__)

WarmState = Literal["cold", "queued", "warming", "warm"]
"""``cold``: nothing queued for the project since this process started."""

WarmReason = Literal["search", "upload", "recent"]
"""Why a project is queued; also the order in which queued projects are warmed."""

_RANK: dict[WarmReason, int] = {"search": 0, "upload": 1, "recent": 2}

WARM_AT_START = 2000
"""How many recently extracted documents are queued at start-up."""

_DOCUMENTS_PER_STEP = 16
"""Documents chunked between two checks for queries, preemption and stop."""


class ProjectWarmth(NamedTuple):
    """Warm-up progress of one project in this process."""

    project_id: str
    passages_warm: int
    passages_total: int
    """0 until the worker has reached the project (its passages are not chunked before)."""
    state: WarmState


class WarmupSummary(NamedTuple):
    """All projects of this process together (what an unauthenticated health check may say)."""

    projects_warming: int
    """Projects queued or being warmed now."""
    passages_warm: int
    passages_total: int


@dataclass
class _Job:
    project_id: str
    reason: WarmReason
    used: float
    """Wall-clock time of the use that queued it; more recent is warmed first."""
    refs: dict[tuple[str, str], DocumentRef] = field(default_factory=dict)
    """By (document id, content hash): a re-extracted document is another entry."""
    documents: dict[tuple[str, str], SourceDocument] = field(default_factory=dict)
    """Documents to chunk into the index first (their refs are in ``refs`` too)."""

    def order(self) -> tuple[int, float]:
        return (_RANK[self.reason], -self.used)


Generation = tuple[int, int]
"""(chunk cache evictions, vector cache evictions): unchanged means nothing was dropped."""


class _WarmRecord(NamedTuple):
    """A project's last complete search warm-up."""

    versions: frozenset[tuple[str, str]]
    """(document id, content hash) of the documents it covered."""
    generation: Generation
    """The caches' eviction counts when it began."""


class Warmup:
    """Warms a :class:`ChunkIndex` and the reranker's vectors on one low-priority daemon thread."""

    def __init__(
        self,
        index: ChunkIndex,
        reranker: Reranker,
        *,
        batch_size: int = 4,
        nice: int = 10,
    ) -> None:
        """
        Args:
            index: The process's chunk cache.
            reranker: Its vectors are warmed when it is a
                :class:`~retrieval.rerankers.WarmableReranker`.
            batch_size: Passages embedded between two checks for queries (smaller
                means a query waits less, larger means less overhead per passage).
            nice: How much lower than the process's priority the thread runs (0-19, Unix).
        """
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.index = index
        self.warmer = reranker if isinstance(reranker, WarmableReranker) else None
        self.batch_size = batch_size
        self.nice = nice
        self.passages_embedded = 0
        """Passages the warm-up itself embedded (not those embedded by queries)."""
        self._jobs: dict[tuple[str, WarmReason], _Job] = {}
        self._progress: dict[str, ProjectWarmth] = {}
        self._warm_refs: dict[str, _WarmRecord] = {}
        """Per project, its last complete search warm-up."""
        self._counts: dict[str, dict[tuple[str, str], tuple[int, int]]] = {}
        """Per project, per (document id, content hash): (passages warm, passages) when a job
        last reached it; :meth:`progress` sums them."""
        self._running: dict[str, frozenset[tuple[str, str]]] = {}
        """Per project, the document versions of the job warming it now."""
        self._queries = 0
        self._busy = False
        self._stop = threading.Event()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    # --- what callers use ----------------------------------------------------

    @contextlib.contextmanager
    def query(self) -> Iterator[None]:
        """Mark a search in progress: the warm-up pauses at its next batch until none is."""
        with self._changed:
            self._queries += 1
        try:
            yield
        finally:
            with self._changed:
                self._queries -= 1
                self._changed.notify_all()

    def want(
        self,
        project_id: str,
        reason: WarmReason,
        *,
        refs: Iterable[DocumentRef] = (),
        documents: Iterable[SourceDocument] = (),
        used: float | None = None,
    ) -> None:
        """Queue a project's documents (``documents`` still to be chunked, ``refs`` cached).

        A search of a project whose last warm-up covered the same documents queues nothing.
        """
        refs = list(refs)
        documents = list(documents)
        if not refs and not documents:
            return
        with self._changed:
            if self._stop.is_set():
                return
            record = self._warm_refs.get(project_id)
            if (
                reason == "search"
                and not documents
                and record is not None
                and record.versions == frozenset(map(_version, refs))
                and record.generation == self._generation()
            ):
                return
            job = self._jobs.get((project_id, reason))
            if job is None:
                job = self._jobs[(project_id, reason)] = _Job(project_id, reason, 0.0)
            job.used = max(job.used, time.time() if used is None else used)
            for ref in refs:
                job.refs.setdefault(_version(ref), ref)
            for document in documents:
                job.documents.setdefault(_version(document), document)
                job.refs.setdefault(_version(document), document.ref)
            if project_id not in self._progress or self._progress[project_id].state == "warm":
                previous = self._progress.get(project_id)
                self._progress[project_id] = ProjectWarmth(
                    project_id,
                    previous.passages_warm if previous else 0,
                    previous.passages_total if previous else 0,
                    "queued",
                )
            self._changed.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="shortlist-warmup", daemon=True
                )
                self._thread.start()

    def progress(self) -> list[ProjectWarmth]:
        """Every project this process has queued since start, in no particular order."""
        with self._changed:
            return list(self._progress.values())

    def wait_idle(self, timeout: float) -> bool:
        """Block until nothing is queued or being warmed; ``False`` if ``timeout`` passed first."""
        end = time.monotonic() + timeout
        with self._changed:
            while self._jobs or self._busy:
                left = end - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True

    def close(self, timeout: float = 2.0) -> None:
        """Stop after the current batch; wait up to ``timeout`` for the thread."""
        with self._changed:
            self._stop.set()
            self._jobs.clear()
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout)

    # --- start-up and ready documents (async, I/O) ---------------------------

    async def queue_recent(self, pool: Pool) -> None:
        """Queue the most recently extracted documents, grouped by project, latest first."""
        try:
            async with pool.connection() as conn:
                rows = await fetch_all(
                    conn,
                    "list_recent_ready_documents",
                    config=self.index.terms_config,
                    limit=WARM_AT_START,
                )
        except (psycopg.Error, OSError):
            logger.warning("could not read documents to warm the caches at start-up")
            return
        by_project: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_project.setdefault(str(row["project_id"]), []).append(row)
        for project_id, project_rows in by_project.items():
            extracted = project_rows[0]["extracted_at"]
            self.want(
                project_id,
                "recent",
                documents=[source(row) for row in project_rows],
                used=extracted.timestamp() if extracted is not None else 0.0,
            )

    async def follow_ready_documents(self, url: str) -> None:
        """Queue each document as soon as any worker announces it ready (LISTEN/NOTIFY).

        Reconnects after a database outage; runs until cancelled.
        """
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    url, autocommit=True, row_factory=dict_row
                ) as conn:
                    await conn.execute(
                        pgsql.SQL("LISTEN {}").format(pgsql.Identifier(READY_CHANNEL))
                    )
                    async for notify in conn.notifies():
                        await self._queue_ready(conn, notify.payload)
            except (psycopg.Error, OSError):
                await asyncio.sleep(2.0)

    async def _queue_ready(self, conn: Connection, document_id: str) -> None:
        rows = await fetch_all(
            conn,
            "fetch_documents_markdown",
            config=self.index.terms_config,
            document_ids=[UUID(document_id)],
        )
        for row in rows:
            self.want(str(row["project_id"]), "upload", documents=[source(row)])

    # --- the thread ----------------------------------------------------------

    def _run(self) -> None:
        _lower_priority(self.nice)
        if self.warmer is not None:
            try:
                self.warmer.warm(())  # loads the model now, not in the first query
            except Exception:
                logger.exception("loading the reranker for the warm-up failed")
        while True:
            job = self._next_job()
            if job is None:
                return
            try:
                self._warm(job)
            except Exception:
                logger.exception("warming the search caches failed")
            finally:
                with self._changed:
                    self._running.pop(job.project_id, None)
                    self._busy = False
                    self._changed.notify_all()

    def _next_job(self) -> _Job | None:
        """The best queued job (taken off the queue), waiting for one; ``None`` once stopped."""
        with self._changed:
            while not self._jobs and not self._stop.is_set():
                self._changed.wait()
            if self._stop.is_set():
                return None
            key = min(self._jobs, key=lambda key: self._jobs[key].order())
            self._busy = True
            return self._jobs.pop(key)

    def _step(self, job: _Job) -> bool:
        """Between two batches: wait while queries run; ``False`` to give up the job.

        Gives it up when stopping, or when a better job is queued (then it is
        queued again, to resume where the caches say it is).
        """
        with self._changed:
            while self._queries and not self._stop.is_set():
                self._changed.wait(0.05)
            if self._stop.is_set():
                return False
            if any(
                other.order() < job.order()
                and (other.project_id, other.reason) != (job.project_id, job.reason)
                for other in self._jobs.values()
            ):  # another search of this very project just merges into the next round
                self._requeue(job)
                return False
        return True

    def _requeue(self, job: _Job) -> None:
        """Put ``job`` back (caller holds the lock), merged with any queued job of the same key."""
        queued = self._jobs.setdefault((job.project_id, job.reason), job)
        if queued is not job:
            queued.used = max(queued.used, job.used)
            for version, ref in job.refs.items():
                queued.refs.setdefault(version, ref)
            for version, document in job.documents.items():
                queued.documents.setdefault(version, document)
        self._set_state(job.project_id, "queued")

    def _generation(self) -> Generation:
        """The caches' eviction counts now."""
        return (self.index.evictions, self.warmer.evictions if self.warmer is not None else 0)

    def _warm(self, job: _Job) -> None:
        generation = self._generation()  # evictions from here on leave the project unwarm
        with self._changed:
            self._running[job.project_id] = frozenset(job.refs)
        self._set_state(job.project_id, "warming")
        documents = list(job.documents.values())
        for start in range(0, len(documents), _DOCUMENTS_PER_STEP):
            if not self._step(job):
                return
            self.index.add(documents[start : start + _DOCUMENTS_PER_STEP])
            for document in documents[start : start + _DOCUMENTS_PER_STEP]:
                del job.documents[_version(document)]
        per_document = self._passages(job.refs.values())
        passages = list(
            {key: text for found in per_document.values() for key, text in found}.items()
        )
        total = len(passages)
        if self.warmer is None:
            self._finish(job, per_document, generation)
            return
        missing = set(self.warmer.uncached(key for key, _ in passages))
        uncached = sorted(  # similar lengths batch with little padding
            ((key, text) for key, text in passages if key in missing), key=lambda p: len(p[1])
        )
        warm = total - len(uncached)
        self._report(job.project_id, warm, total)
        for start in range(0, len(uncached), self.batch_size):
            if not self._step(job):
                return
            batch = uncached[start : start + self.batch_size]
            embedded = self.warmer.warm(batch)
            with self._changed:
                self.passages_embedded += embedded
            warm += len(batch)  # those a query embedded meanwhile are warm too
            self._report(job.project_id, warm, total)
        if not self._warm_across_languages(job):
            return
        self._finish(job, per_document, generation)

    def _warm_across_languages(self, job: _Job) -> bool:
        """Give the passages of the job's documents written in another language than the
        default one their multilingual vectors (after every MiniLM vector: they serve questions
        in other languages, the rarer case); ``False`` when the job was given up meanwhile."""
        warmer = self.warmer
        if not isinstance(warmer, CrossLingualReranker):
            return True
        passages: dict[str, str] = {}
        for ref in job.refs.values():
            with contextlib.suppress(DocumentNotIndexed):  # evicted: its next search loads it
                passages.update(self.index.other_language_passages(ref))
        missing = set(warmer.uncached_across_languages(passages))
        todo = sorted(
            ((k, t) for k, t in passages.items() if k in missing), key=lambda p: len(p[1])
        )
        for start in range(0, len(todo), self.batch_size):
            if not self._step(job):
                return False
            embedded = warmer.warm_across_languages(todo[start : start + self.batch_size])
            with self._changed:
                self.passages_embedded += embedded
        return True

    def _passages(
        self, refs: Iterable[DocumentRef]
    ) -> dict[tuple[str, str], list[tuple[str, str]]]:
        """Per document version, ``(key, text)`` of its chunks; empty for one not in the
        index (evicted, or never loaded here: its next search loads it)."""
        passages: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for ref in refs:
            try:
                passages[_version(ref)] = self.index.reader_passages(ref)
            except DocumentNotIndexed:
                passages[_version(ref)] = []
        return passages

    def _report(self, project_id: str, warm: int, total: int) -> None:
        """Progress of a job under way: its own counts plus the project's other documents'."""
        with self._changed:
            warm, total = self._with_others(project_id, warm, total)
            self._progress[project_id] = ProjectWarmth(project_id, warm, total, "warming")

    def _with_others(self, project_id: str, warm: int, total: int) -> tuple[int, int]:
        """``warm`` and ``total`` plus the counts of the project's documents no job is warming
        now (caller holds the lock)."""
        running = self._running.get(project_id, frozenset())
        for version, (other_warm, other_total) in self._counts.get(project_id, {}).items():
            if version not in running:
                warm, total = warm + other_warm, total + other_total
        return warm, total

    def _set_state(self, project_id: str, state: WarmState) -> None:
        with self._changed:
            previous = self._progress.get(project_id, ProjectWarmth(project_id, 0, 0, state))
            self._progress[project_id] = previous._replace(state=state)

    def _finish(
        self,
        job: _Job,
        per_document: dict[tuple[str, str], list[tuple[str, str]]],
        generation: Generation,
    ) -> None:
        """Record each document's counts and the project's progress as the sum of them."""
        counted: dict[tuple[str, str], tuple[int, int]] = {}
        for version, found in per_document.items():
            keys = [key for key, _ in found]
            cold = len(self.warmer.uncached(keys)) if self.warmer is not None else 0
            counted[version] = (len(keys) - cold, len(keys))
        with self._changed:
            counts = self._counts.setdefault(job.project_id, {})
            replaced = {document_id for document_id, _ in counted}
            for version in [v for v in counts if v[0] in replaced and v not in counted]:
                del counts[version]  # an older version of a re-extracted document
            counts.update(counted)
            self._running.pop(job.project_id, None)
            warm, total = self._with_others(job.project_id, 0, 0)
            queued = any(key[0] == job.project_id for key in self._jobs)
            state: Literal["queued", "warm"] = "queued" if queued else "warm"
            self._progress[job.project_id] = ProjectWarmth(job.project_id, warm, total, state)
            if job.reason == "search":
                self._warm_refs[job.project_id] = _WarmRecord(frozenset(job.refs), generation)


async def project_warmth(
    conn: Connection, user_id: UUID, warmup: Warmup | None
) -> list[ProjectWarmth]:
    """Warm-up progress in this process of each of the user's projects (``cold`` if none)."""
    known = {entry.project_id: entry for entry in warmup.progress()} if warmup else {}
    return [
        known.get(str(project.id), ProjectWarmth(str(project.id), 0, 0, "cold"))
        for project in await projects.list_projects(conn, user_id)
    ]


def summary(warmup: Warmup | None) -> WarmupSummary:
    """Totals over every project this process has queued since start."""
    entries = warmup.progress() if warmup else []
    return WarmupSummary(
        projects_warming=sum(1 for entry in entries if entry.state in ("queued", "warming")),
        passages_warm=sum(entry.passages_warm for entry in entries),
        passages_total=sum(entry.passages_total for entry in entries),
    )


def _version(document: DocumentRef | SourceDocument) -> tuple[str, str]:
    return (document.id, document.content_hash)


def _lower_priority(nice: int) -> None:
    """Lower the calling thread's OS priority (Linux: ``setpriority`` on a thread id)."""
    if nice <= 0:
        return
    try:
        thread_id = threading.get_native_id()
        os.setpriority(
            os.PRIO_PROCESS, thread_id, os.getpriority(os.PRIO_PROCESS, thread_id) + nice
        )
    except (AttributeError, OSError):  # not Unix, or not allowed: cooperative batches still hold
        logger.debug("could not lower the warm-up thread's priority")


def source(row: dict[str, Any]) -> SourceDocument:
    """A ``fetch_documents_markdown``-shaped row as the retrieval core takes it, with the
    layout of its chunks where the row has one (:func:`prefilter.stored_layout`)."""
    return SourceDocument(
        str(row["id"]),
        row["name"],
        row["content_hash"],
        row["markdown"],
        prefilter.stored_layout(row.get("passage_layout")),
    )
