"""Health and identity."""

from __future__ import annotations

from typing import Any

import anyio.to_thread
from litestar import Controller, Response, get

from service.errors import ShortlistError
from service.http.dependencies import PrincipalDep, RuntimeDep
from service.http.schemas import Check, Health, Me, RerankerCheck
from service.runtime import Runtime
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

    @get("/health", operation_id="GetHealth", exclude_from_auth=True)
    async def health(self, runtime: RuntimeDep) -> Response[Health]:
        """Readiness of the database, the blob store and the reranker.

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
        body = Health(status=status, database=database, blob_store=blob_store, reranker=reranker)
        return Response(body, status_code=200 if database.ok else 503)

    @get("/me", operation_id="GetMe")
    async def me(self, principal: PrincipalDep) -> Me:
        """The user the presented token belongs to."""
        return Me(id=principal.user_id, name=principal.user_name)
