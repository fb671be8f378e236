"""``shortlist tune``: sweep the shortlist size over a project's own text (see :mod:`retrieval.tuning`)."""

from __future__ import annotations

from typing import TYPE_CHECKING
from uuid import UUID

import anyio.to_thread

from retrieval.tuning import DEFAULT_QUESTIONS, TuneReport, sweep
from service.errors import InvalidRequest
from service.records import Principal
from service.services import projects
from service.services.warmup import source
from service.storage.db import Connection, fetch_all

if TYPE_CHECKING:
    from service.services.search import SearchEngine


async def tune_project(
    conn: Connection,
    engine: SearchEngine,
    principal: Principal,
    project_id: UUID,
    *,
    questions: int = DEFAULT_QUESTIONS,
    seed: int = 0,
) -> TuneReport:
    """Each candidate ``shortlist_keep`` against reranking everything, on the project's text."""
    await projects.get_project(conn, principal.user_id, project_id)
    if questions < 1:
        raise InvalidRequest("questions must be at least 1.", field="questions")
    refs = await fetch_all(
        conn, "list_ready_document_refs", project_id=project_id, document_ids=None
    )
    if not refs:
        raise InvalidRequest("The project has no searchable documents to tune on.")
    rows = await fetch_all(
        conn,
        "fetch_documents_markdown",
        config=engine.index.terms_config,
        document_ids=[row["id"] for row in refs],
    )
    documents = [source(row) for row in rows]
    search = engine.settings.search
    return await anyio.to_thread.run_sync(
        lambda: sweep(
            documents,
            engine.reranker,
            questions=questions,
            chunk_size=search.chunk_size,
            language=search.language,
            rerank_timeout=max(search.rerank_timeout, 60.0),
            seed=seed,
        )
    )
