"""Health and identity."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import anyio.to_thread
from litestar import Controller, Response, get
from litestar.openapi.datastructures import ResponseSpec

from service.errors import ShortlistError
from service.http.dependencies import ConnectionDep, PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.http.schemas import (
    Check,
    Health,
    Me,
    ProjectWarmup,
    RerankerCheck,
    Status,
    WarmupCheck,
)
from service.runtime import Runtime
from service.services import warmup
from service.storage.blobs import BlobStoreError
from service.storage.db import ping


async def _blob_store_check(runtime: Runtime) -> Check:
    try:
        await anyio.to_thread.run_sync(runtime.blobs.check)
    except BlobStoreError as exc:
        return Check(ok=False, detail=exc.message)
    return Check(ok=True, detail=runtime.blobs.name)


class SystemController(Controller):
    path = "/api"
    tags = ["system"]

    @operation(
        get,
        "/health",
        operation_id="GetHealth",
        summary="Health of the database, blob store and reranker",
        scope="public",
        responses={
            503: ResponseSpec(
                data_container=Health,
                generate_examples=False,
                description="The database does not answer; the body says what does.",
            )
        },
    )
    async def health(self, runtime: RuntimeDep) -> Response[Health]:
        """Readiness of the database, the blob store and the reranker; warm-up totals.

        Returns:
            200 when the database answers (even if another part is degraded), else 503.
        """
        try:
            await ping(runtime.pool)
            database = Check(ok=True, detail="connected")
        except ShortlistError as exc:
            database = Check(ok=False, detail=exc.message)
        blob_store = await _blob_store_check(runtime)
        ready, detail = await anyio.to_thread.run_sync(runtime.search.reranker_status)
        reranker = RerankerCheck(ok=ready, kind=runtime.settings.reranker_kind, detail=detail)
        if not database.ok:
            status: Any = "unavailable"
        elif blob_store.ok and reranker.ok:
            status = "ok"
        else:
            status = "degraded"
        totals = warmup.summary(runtime.search.warmup)
        body = Health(
            status=status,
            database=database,
            blob_store=blob_store,
            reranker=reranker,
            warmup=WarmupCheck(
                projects_warming=totals.projects_warming,
                passages_warm=totals.passages_warm,
                passages_total=totals.passages_total,
            ),
        )
        return Response(body, status_code=200 if database.ok else 503)

    @operation(get, "/me", operation_id="GetMe", summary="Who the token belongs to", scope="read")
    async def me(self, principal: PrincipalDep) -> Me:
        """The user the presented token belongs to, and the token's scope."""
        return Me.of(principal)

    @operation(
        get,
        "/status",
        operation_id="GetStatus",
        summary="How warm each project's search caches are",
        scope="read",
    )
    async def status(
        self, runtime: RuntimeDep, conn: ConnectionDep, principal: PrincipalDep
    ) -> Status:
        """How warm each of the caller's projects is in the process that answers.

        Until a project is warm, searches may rank some passages by BM25 alone
        (``unscored`` in the search response); results may improve.
        """
        found = await warmup.project_warmth(conn, principal.user_id, runtime.search.warmup)
        return Status(
            projects=[
                ProjectWarmup(
                    project_id=UUID(entry.project_id),
                    state=entry.state,
                    passages_warm=entry.passages_warm,
                    passages_total=entry.passages_total,
                )
                for entry in found
            ]
        )
