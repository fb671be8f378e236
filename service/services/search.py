"""Search a project: feed the pure retrieval core from PostgreSQL, and keep its caches warm.

Each process holds one :class:`SearchEngine`: the in-memory cache of chunked,
tokenised documents (keyed by document id + content hash, so it is correct
after a change made by any replica) and the reranker. Document text is read
from PostgreSQL only for documents the cache is missing. Filling the caches
ahead of queries is :mod:`service.services.warmup`'s job; each search marks
itself running there (the warm-up pauses) and queues its project.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING
from uuid import UUID

import anyio.to_thread

from retrieval import ChunkIndex, DocumentRef, SearchResult, SourceDocument
from retrieval import search as retrieve
from retrieval.rerankers import Reranker, make_reranker
from service.errors import InvalidRequest
from service.records import Principal
from service.services import projects
from service.services.warmup import Warmup, source
from service.storage.db import Connection
from sql import queries

if TYPE_CHECKING:
    from service.settings import Settings

logger = logging.getLogger(__name__)

MB = 1024 * 1024


def build_reranker(settings: Settings) -> Reranker:
    kind = settings.reranker_kind
    if kind == "cohere":
        assert settings.cohere_api_key is not None, "reranker 'cohere' needs COHERE_API_KEY"
        return make_reranker(
            "cohere",
            api_key=settings.cohere_api_key.get_secret_value(),
            model=settings.search.cohere_model,
            base_url=settings.search.cohere_base_url,
            timeout=settings.search.rerank_timeout,
            max_retries=settings.search.cohere_max_retries,
            max_tokens_per_doc=settings.search.cohere_max_tokens_per_doc,
            failure_threshold=settings.search.cohere_failure_threshold,
            cooldown=settings.search.cohere_cooldown_seconds,
        )
    if kind == "local":
        return make_reranker("local", embed_budget=settings.search.local_embed_budget)
    return make_reranker(kind)


class SearchEngine:
    """The process's chunk cache and reranker, and the search entry point."""

    def __init__(
        self, settings: Settings, reranker: Reranker | None = None, *, background: bool = True
    ) -> None:
        """``background=False`` (one-shot commands): no warm-up thread, nothing queued."""
        self.settings = settings
        self.index = ChunkIndex(
            chunk_size=settings.search.chunk_size,
            language=settings.search.language,
            max_bytes=settings.search.cache_max_mb * MB,
        )
        self.reranker = reranker or build_reranker(settings)
        self.warmup: Warmup | None = None
        if background:
            self.warmup = Warmup(
                self.index,
                self.reranker,
                batch_size=settings.search.warmup_batch,
                nice=settings.search.warmup_nice,
            )

    def close(self) -> None:
        if self.warmup is not None:
            self.warmup.close()
        close_reranker = getattr(self.reranker, "close", None)  # Cohere's HTTP connections
        if close_reranker is not None:
            close_reranker()

    def reranker_status(self) -> tuple[bool, str]:
        """(ready, detail) for the health check; the local model is loaded here if needed."""
        load = getattr(self.reranker, "load", None)
        if load is not None and load() is None:
            reason = (
                getattr(self.reranker, "load_error", None) or "the local model could not be loaded"
            )
            return False, f"{reason}; results come back in BM25 order"
        return True, self.reranker.name

    async def search(
        self,
        conn: Connection,
        principal: Principal,
        project_id: UUID,
        query: str,
        *,
        top_k: int | None = None,
        document_ids: Sequence[UUID] | None = None,
    ) -> SearchResult:
        """The project's best passages for ``query``, cited to document and pages."""
        await projects.get_project(conn, principal.user_id, project_id)
        limit = self.settings.search.max_top_k
        top_k = top_k or self.settings.search.default_top_k
        if not 1 <= top_k <= limit:
            raise InvalidRequest(f"top_k must be between 1 and {limit}.", field="top_k")
        rows = await (
            await conn.execute(
                queries["list_ready_document_refs"],
                {
                    "project_id": project_id,
                    "document_ids": list(document_ids) if document_ids else None,
                },
            )
        ).fetchall()
        refs = [DocumentRef(str(row["id"]), row["name"], row["content_hash"]) for row in rows]
        loaded = await self._load_missing(conn, refs)
        search_settings = self.settings.search
        with self.warmup.query() if self.warmup else contextlib.nullcontext():
            result = await anyio.to_thread.run_sync(
                lambda: retrieve(
                    self.index,
                    query,
                    refs,
                    reranker=self.reranker,
                    top_k=top_k,
                    keep=search_settings.shortlist_keep,
                    max_candidates=search_settings.max_candidates,
                    rerank_timeout=search_settings.rerank_timeout,
                    documents=loaded,
                )
            )
        if self.warmup is not None:
            self.warmup.want(str(project_id), "search", refs=refs)
        return result

    async def _load_missing(
        self, conn: Connection, refs: Sequence[DocumentRef]
    ) -> list[SourceDocument]:
        missing = self.index.missing(refs)
        if not missing:
            return []
        rows = await (
            await conn.execute(
                queries["fetch_documents_markdown"],
                {"document_ids": [UUID(ref.id) for ref in missing]},
            )
        ).fetchall()
        return [source(row) for row in rows]
