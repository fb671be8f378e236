"""Health and identity."""

from __future__ import annotations

from typing import Any
from uuid import UUID

import anyio.to_thread
from litestar import Controller, Response, get
from litestar.openapi.datastructures import ResponseSpec

from service.http.dependencies import ConnectionDep, PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.http.schemas import (
    Check,
    Health,
    Liveness,
    Me,
    ProjectWarmup,
    Readiness,
    RerankerCheck,
    Status,
    WarmupCheck,
)
from service.services import health, warmup


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
        probed = await health.readiness(runtime)
        database, blob_store = Check.of(probed.database), Check.of(probed.blob_store)
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

    @operation(
        get,
        "/health/live",
        operation_id="GetLiveness",
        summary="Liveness: the process answers",
        scope="public",
    )
    async def liveness(self) -> Liveness:
        """Always 200 while the process runs; checks nothing (a Kubernetes liveness probe)."""
        return Liveness(status="alive")

    @operation(
        get,
        "/health/ready",
        operation_id="GetReadiness",
        summary="Readiness: the database and the blob store answer",
        scope="public",
        responses={
            503: ResponseSpec(
                data_container=Readiness,
                generate_examples=False,
                description="The database or the blob store does not answer; the body says which.",
            )
        },
    )
    async def readiness(self, runtime: RuntimeDep) -> Response[Readiness]:
        """Whether this process can serve requests (a Kubernetes readiness probe).

        Returns:
            200 when the database and the blob store both answer, else 503.
        """
        probed = await health.readiness(runtime)
        body = Readiness(
            status="ready" if probed.ready else "unavailable",
            database=Check.of(probed.database),
            blob_store=Check.of(probed.blob_store),
        )
        return Response(body, status_code=200 if probed.ready else 503)

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
