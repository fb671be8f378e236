"""Search a project: feed the pure retrieval core from PostgreSQL, and keep its caches warm.

Each process holds one :class:`SearchEngine`: the in-memory cache of chunked,
tokenised documents (keyed by document id + content hash, so it is correct
after a change made by any replica) and the reranker. Document text is read
from PostgreSQL only for documents the cache is missing. Every door searches
through :func:`search_project`, which owns the rules (budget, limits, document
checks, default project) and holds a connection only while it reads. Filling the caches
ahead of queries is :mod:`service.services.warmup`'s job; each search marks
itself running there (the warm-up pauses) and queues its project.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import MappingProxyType
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

import anyio.to_thread

from retrieval import ChunkIndex, DocumentRef, Prefiltered, SearchResult, SourceDocument
from retrieval import search as retrieve
from retrieval.pipeline import validate_query
from retrieval.rerankers import (
    ClosableReranker,
    CrossLingualReranker,
    LoadableReranker,
    QueryPreparingReranker,
    Reranker,
    WarmableReranker,
    make_reranker,
)
from retrieval.types import Hit
from service import metrics
from service.errors import DocumentNotFound, InvalidRequest
from service.records import Principal, Project
from service.services import documents, figures, prefilter, projects
from service.services.documents import not_searchable_count
from service.services.figures import NumberedFigure
from service.services.page_images import has_page_images
from service.services.warmup import Warmup, source
from service.storage.db import Connection, connection, fetch_all, snapshot

if TYPE_CHECKING:
    from service.runtime import Runtime
    from service.settings import Settings

logger = logging.getLogger(__name__)

MB = 1024 * 1024
#: Most documents one search may be restricted to (each is looked up and checked).
MAX_SEARCH_DOCUMENTS = 100
#: Projects whose size a process remembers, to pick how a search reads it (SearchEngine.load).
REMEMBERED_PROJECTS = 10_000


class Loaded(NamedTuple):
    """What :meth:`SearchEngine.load` read for one search."""

    refs: list[DocumentRef]
    """The documents to rank: every searched one, or with ``prefiltered`` only the documents
    of its passages."""
    documents: list[SourceDocument]
    """The Markdown of those of ``refs`` the cache lacked."""
    ready: int
    """How many ready documents were searched."""
    pictured: frozenset[str] = frozenset()
    """The ids of those of ``refs`` that have page images."""
    prefiltered: Prefiltered | None = None
    """BM25's shortlist from PostgreSQL (:mod:`service.services.prefilter`), for a project of
    at least ``search.prefilter_min_passages`` passages whose terms are all stored."""
    languages: Mapping[str, str] = MappingProxyType({})
    """The written language stored with the current terms of those of ``documents`` that have
    it: what chunking them would detect again (:meth:`ChunkIndex.documents`)."""


class Listed(NamedTuple):
    """The documents a search reads, as :meth:`SearchEngine._refs` lists them."""

    refs: list[DocumentRef]
    pictured: frozenset[str]
    covered: prefilter.LexicalStats
    languages: dict[str, str]


class ProjectSearch(NamedTuple):
    """One search's answer and what it searched."""

    project: Project
    query: str
    """The query as searched (surrounding whitespace removed)."""
    result: SearchResult
    documents_not_searchable: int
    """The project's documents left out because they are pending, extracting or failed (0 for
    a search restricted to named documents, each of which must be searchable)."""
    pictured: frozenset[str] = frozenset()
    """Ids of the searched documents that have page images (PDFs and images)."""
    base_url: str = ""
    """The service's public base URL, which the page image addresses of the results start with."""
    figures: Mapping[str, NumberedFigure] = MappingProxyType({})
    """The figure each result is or sits beside, by chunk id (results beside none left out)."""


async def search_project(
    runtime: Runtime,
    principal: Principal,
    project: UUID | str | None,
    query: str,
    *,
    top_k: int | None = None,
    documents: Sequence[UUID | str] | None = None,
) -> ProjectSearch:
    """Search one of the caller's projects: the one search every door (REST, MCP, CLI) calls.

    The rules live here, once. The token's search budget is spent first, before
    any connection is taken; the query and ``top_k`` are checked next (``None``
    means ``search.default_top_k``; at most ``search.max_top_k``). ``project`` is
    an id, a name, or ``None`` for :func:`projects.resolve_project`'s default.
    ``documents`` (ids, or names within the project) restricts the search; each
    must be a document of that project (else ``document_not_found``) that can be
    searched (else ``document_not_ready``). What the search needs is read on one
    short-lived pooled connection, in one snapshot (so the project's counts hold for what
    is searched), released before the ranking, which may take up to
    ``search.rerank_timeout``.
    """
    runtime.search_limiter.check(str(principal.token_id))
    engine = runtime.search
    query = validate_query(query)
    top_k = engine.check_top_k(top_k)
    wanted = _check_document_count(documents)
    started = time.perf_counter()
    prepared = engine.prepare(query)  # the query's own part of ranking, while the database reads
    async with connection(runtime.pool) as conn, snapshot(conn):
        target = await projects.resolve_project(conn, principal.user_id, project)
        document_ids = (
            await _searchable_documents(conn, principal, target, wanted) if wanted else None
        )
        found = await engine.load(
            conn, target.id, document_ids, query=query, ready=target.ready_count, counted=True
        )
    loaded_at = time.perf_counter()
    result = await engine.rank(target.id, query, found, top_k=top_k, prepared=prepared)
    metrics.record_search(result, load_seconds=loaded_at - started)
    left_out = 0 if document_ids else not_searchable_count(target, found.ready)
    pictured = found.pictured
    beside = await _figures_beside(runtime, result.hits, pictured)
    return ProjectSearch(
        target, query, result, left_out, pictured, runtime.settings.public_url, beside
    )


async def _figures_beside(
    runtime: Runtime, hits: Sequence[Hit], pictured: frozenset[str]
) -> Mapping[str, NumberedFigure]:
    """The figure each result is or sits beside, read (on a short-lived connection) for the
    results' documents that have pages."""
    wanted = {UUID(hit.document_id) for hit in hits if hit.document_id in pictured}
    if not wanted:
        return MappingProxyType({})
    async with connection(runtime.pool) as conn:
        stored = await figures.figures_of(conn, wanted)
    return MappingProxyType(figures.beside_hits(hits, stored))


def _check_document_count(documents: Sequence[UUID | str] | None) -> list[UUID | str]:
    """The documents asked for, each once; refused beyond :data:`MAX_SEARCH_DOCUMENTS`."""
    unique = list(dict.fromkeys(documents or ()))
    if len(unique) > MAX_SEARCH_DOCUMENTS:
        raise InvalidRequest(
            f"A search may be restricted to at most {MAX_SEARCH_DOCUMENTS} documents; "
            f"{len(unique)} were given.",
            field="documents",
        )
    return unique


async def _searchable_documents(
    conn: Connection, principal: Principal, project: Project, references: Sequence[UUID | str]
) -> list[UUID]:
    """The ids of the named documents, each checked to be in ``project`` and searchable."""
    chosen: list[UUID] = []
    for reference in references:
        document = await documents.find_document(conn, principal, reference, project)
        if document.project_id != project.id:
            raise DocumentNotFound(
                f"{document.name!r} is not in project {project.name!r}.", document=str(reference)
            )
        documents.require_searchable(document)
        chosen.append(document.id)
    return list(dict.fromkeys(chosen))


def build_reranker(settings: Settings, *, score_every_candidate: bool = False) -> Reranker:
    """The configured reranker; ``score_every_candidate`` lifts the local model's per-search
    embedding budget (see :class:`SearchEngine`)."""
    kind = settings.reranker_kind
    if kind == "cohere":
        return make_reranker(
            "cohere",
            api_key=settings.require_cohere_api_key(),
            model=settings.search.cohere_model,
            base_url=settings.search.cohere_base_url,
            timeout=settings.search.rerank_timeout,
            max_retries=settings.search.cohere_max_retries,
            max_tokens_per_doc=settings.search.cohere_max_tokens_per_doc,
            failure_threshold=settings.search.cohere_failure_threshold,
            cooldown=settings.search.cohere_cooldown_seconds,
        )
    if kind == "local":
        budget = None if score_every_candidate else settings.search.local_embed_budget
        return make_reranker(
            "local",
            embed_budget=budget,
            max_tokens=settings.search.local_max_tokens,
            cross_lingual=settings.search.cross_lingual,
        )
    return make_reranker(kind)


#: How long a one-shot search may spend scoring every candidate with the local model.
ONE_SHOT_RERANK_SECONDS = 3600.0


class SearchEngine:
    """The process's chunk cache and reranker: :meth:`load` reads, :meth:`rank` ranks."""

    def __init__(
        self,
        settings: Settings,
        reranker: Reranker | None = None,
        *,
        background: bool = True,
        score_every_candidate: bool = False,
    ) -> None:
        """``background=False`` (one-shot commands): no warm-up thread, nothing queued.

        ``score_every_candidate=True`` (one-shot commands, which have no other searches to
        protect): the local model embeds every candidate its cache lacks before answering,
        with no embedding budget and no rerank deadline, so the answer is ``reranked``,
        never partly ranked. A service keeps both bounds: one cold search must not hold up
        the others, and the warm-up fills the cache instead.
        """
        self.settings = settings
        self.score_every_candidate = score_every_candidate
        self.index = ChunkIndex(
            chunk_size=settings.search.chunk_size,
            language=settings.search.language,
            max_bytes=settings.search.cache_max_mb * MB,
        )
        self.reranker = reranker or build_reranker(
            settings, score_every_candidate=score_every_candidate
        )
        self._preparing = ThreadPoolExecutor(1, thread_name_prefix="shortlist-query")
        """Where :meth:`prepare` does a query's own part of ranking (one thread: a search
        whose turn has not come by its ranking does that part itself)."""
        self._passages: OrderedDict[UUID, int] = OrderedDict()
        """Stored passages per project when last searched: a hint (:meth:`_looks_small`)."""
        self.warmup: Warmup | None = None
        if background:
            self.warmup = Warmup(
                self.index,
                self.reranker,
                batch_size=settings.search.warmup_batch,
                nice=settings.search.warmup_nice,
            )

    def close(self) -> None:
        self._preparing.shutdown(wait=False, cancel_futures=True)
        if self.warmup is not None:
            self.warmup.close()
        if isinstance(self.reranker, ClosableReranker):  # Cohere's HTTP connections
            self.reranker.close()

    def reranker_status(self) -> tuple[bool, str]:
        """(ready, detail) for the health check; the local model is loaded here if needed."""
        reranker = self.reranker
        if isinstance(reranker, LoadableReranker) and reranker.load() is None:
            reason = reranker.load_error or "the local model could not be loaded"
            return False, f"{reason}; results come back in BM25 order"
        if isinstance(reranker, CrossLingualReranker) and reranker.cross_lingual_error:
            return True, f"{reranker.name}; across languages off: {reranker.cross_lingual_error}"
        return True, self.reranker.name

    @property
    def rerank_timeout(self) -> float:
        """Seconds a search gives the reranker: the setting, unless this engine scores every
        candidate with a model that embeds them here (Cohere's timeout always holds)."""
        if self.score_every_candidate and isinstance(self.reranker, WarmableReranker):
            return ONE_SHOT_RERANK_SECONDS
        return self.settings.search.rerank_timeout

    def check_top_k(self, top_k: int | None) -> int:
        """``top_k`` as asked, or the default; refused outside 1..``search.max_top_k``."""
        limit = self.settings.search.max_top_k
        if top_k is None:
            return self.settings.search.default_top_k
        if not 1 <= top_k <= limit:
            raise InvalidRequest(f"top_k must be between 1 and {limit}.", field="top_k")
        return top_k

    async def load(
        self,
        conn: Connection,
        project_id: UUID,
        document_ids: Sequence[UUID] | None = None,
        *,
        query: str,
        ready: int | None = None,
        counted: bool = False,
    ) -> Loaded:
        """The project's ready documents (or only ``document_ids``) to rank for ``query``, the
        text the cache lacks, and the ids of those that have page images.

        A project of at least ``search.prefilter_min_passages`` passages, every one of whose
        searched documents has its terms stored, is shortlisted by PostgreSQL here
        (:mod:`service.services.prefilter`): only the shortlist's documents are loaded.
        The only part of a search that needs the database: the caller releases the
        connection before :meth:`rank`.

        Which it is, is decided from exact counts of what is stored, read in one of two ways
        (:meth:`_looks_small` picks; either way is correct, one is cheaper): with the list of
        the documents to search, which an exhaustive search reads anyway (a small project:
        no query of its own), or first on their own (``lexical_stats``), so that a large
        project's search does not list every document. ``ready`` is the project's ready
        document count if the caller has it (:attr:`Project.ready_count`), a hint only; or,
        ``counted``, the count itself: read in the snapshot this call reads in
        (:func:`~service.storage.db.snapshot`), so that a large project's search does not
        count its documents twice (at a million passages, 142,857 of them: ~10 ms).
        """
        if document_ids or self._looks_small(project_id, ready):
            listed = await self._refs(conn, project_id, document_ids)
            covered = listed.covered
            if not document_ids:
                self._remember(project_id, covered)
            if not self._prefilters(covered):
                return await self._loaded(conn, listed, len(listed.refs))
        else:
            covered = await prefilter.stats(
                conn,
                self.index.terms_config,
                project_id,
                document_ids,
                ready=ready if counted else None,
            )
            self._remember(project_id, covered)
            if not self._prefilters(covered):
                listed = await self._refs(conn, project_id, document_ids)
                return await self._loaded(conn, listed, len(listed.refs))
        search_settings = self.settings.search
        prefiltered = await prefilter.shortlist(
            conn,
            self.index,
            project_id,
            query,
            covered,
            document_ids,
            limit=min(search_settings.shortlist_keep, search_settings.max_candidates),
            depth=prefilter.term_depth(search_settings.prefilter_term_depth, covered.passages),
        )
        wanted = list(dict.fromkeys(UUID(p.document_id) for p in prefiltered.passages))
        if not wanted:
            return Loaded([], [], covered.ready, frozenset(), prefiltered)
        listed = await self._refs(conn, project_id, wanted)
        return await self._loaded(conn, listed, covered.ready, prefiltered)

    def _prefilters(self, covered: prefilter.LexicalStats) -> bool:
        """Whether a search of what ``covered`` describes asks PostgreSQL for its shortlist:
        from the threshold on, and only once every searched document's terms are current."""
        return (
            covered.documents == covered.ready
            and covered.passages >= self.settings.search.prefilter_min_passages
        )

    def _looks_small(self, project_id: UUID, ready: int | None) -> bool:
        """Whether a search of the whole project had best read the documents' list first:
        the project held fewer passages than the threshold when this process last searched
        it, or, not searched yet, has fewer ready documents than the threshold has passages."""
        threshold = self.settings.search.prefilter_min_passages
        known = self._passages.get(project_id)
        if known is not None:
            return known < threshold
        return ready is not None and ready < threshold

    def _remember(self, project_id: UUID, covered: prefilter.LexicalStats) -> None:
        """Keep a project's stored passages for :meth:`_looks_small` (the most recent
        :data:`REMEMBERED_PROJECTS` projects)."""
        self._passages[project_id] = covered.passages
        self._passages.move_to_end(project_id)
        while len(self._passages) > REMEMBERED_PROJECTS:
            self._passages.popitem(last=False)

    async def _refs(
        self, conn: Connection, project_id: UUID, document_ids: Sequence[UUID] | None
    ) -> Listed:
        """The project's ready documents (or only those of ``document_ids``), oldest first, the
        ids of those that have page images, what their stored terms cover, and the written
        languages stored with them."""
        rows = await fetch_all(
            conn,
            "list_ready_document_refs_with_terms",
            project_id=project_id,
            config=self.index.terms_config,
            document_ids=list(document_ids) if document_ids else None,
        )
        refs = [DocumentRef(str(row["id"]), row["name"], row["content_hash"]) for row in rows]
        pictured = frozenset(str(row["id"]) for row in rows if has_page_images(row["kind"]))
        languages = {
            str(row["id"]): row["written_language"] for row in rows if row["written_language"]
        }
        return Listed(refs, pictured, prefilter.coverage(rows), languages)

    async def _loaded(
        self, conn: Connection, listed: Listed, ready: int, prefiltered: Prefiltered | None = None
    ) -> Loaded:
        """What :meth:`load` returns for the documents ``listed``: with the Markdown the cache
        lacks, and the stored written languages of those documents."""
        missing = await self._load_missing(conn, listed.refs)
        languages = {
            doc.id: listed.languages[doc.id] for doc in missing if doc.id in listed.languages
        }
        return Loaded(
            listed.refs, missing, ready, listed.pictured, prefiltered, MappingProxyType(languages)
        )

    def prepare(self, query: str) -> Future[None] | None:
        """Start the reranker's work on ``query`` alone (the local model's query vector) in a
        thread of its own, so that it overlaps the database's reads; hand what this returns to
        :meth:`rank`. ``None`` for a reranker with no such work (Cohere's, none)."""
        reranker = self.reranker
        if not isinstance(reranker, QueryPreparingReranker):
            return None

        def prepare() -> None:
            with self.warmup.query() if self.warmup else contextlib.nullcontext():
                reranker.prepare(query)

        try:
            return self._preparing.submit(prepare)
        except RuntimeError:  # shut down: the ranking does it all
            return None

    async def rank(
        self,
        project_id: UUID,
        query: str,
        found: Loaded,
        *,
        top_k: int,
        prepared: Future[None] | None = None,
    ) -> SearchResult:
        """The best passages of ``refs`` for ``query``, cited (in a thread; no database), once
        :meth:`prepare`'s work is done (or, not yet begun, withdrawn: the ranking does it)."""
        search_settings = self.settings.search

        def ranked() -> SearchResult:
            if prepared is not None and not prepared.cancel():
                prepared.result()
            return retrieve(
                self.index,
                query,
                found.refs,
                reranker=self.reranker,
                top_k=top_k,
                keep=search_settings.shortlist_keep,
                max_candidates=search_settings.max_candidates,
                rerank_timeout=self.rerank_timeout,
                documents=found.documents,
                prefiltered=found.prefiltered,
                languages=found.languages,
            )

        with self.warmup.query() if self.warmup else contextlib.nullcontext():
            result = await anyio.to_thread.run_sync(ranked)
        if self.warmup is not None:  # what this search touched: with the prefilter, not all
            self.warmup.want(str(project_id), "search", refs=found.refs)
        return result

    async def _load_missing(
        self, conn: Connection, refs: Sequence[DocumentRef]
    ) -> list[SourceDocument]:
        missing = self.index.missing(refs)
        if not missing:
            return []
        rows = await fetch_all(
            conn,
            "fetch_documents_markdown",
            config=self.index.terms_config,
            document_ids=[UUID(ref.id) for ref in missing],
        )
        return [source(row) for row in rows]
