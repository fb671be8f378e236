"""Whether this process can serve: liveness, readiness and the full report share one check.

- alive: the process answers (nothing is checked; ``GET /api/health/live``);
- ready: the database and the blob store both answer (``GET /api/health/ready``: 503
  otherwise, so a load balancer or Kubernetes stops sending requests until they are back);
- the report (``GET /api/health``) adds the reranker and the warm-up totals.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import anyio.to_thread

from service.errors import ShortlistError
from service.storage.blobs import BlobStoreError
from service.storage.db import ping

if TYPE_CHECKING:
    from service.runtime import Runtime


class Probe(NamedTuple):
    ok: bool
    detail: str


class Readiness(NamedTuple):
    database: Probe
    blob_store: Probe

    @property
    def ready(self) -> bool:
        """Requests can be served: both the database and the blob store answer."""
        return self.database.ok and self.blob_store.ok


async def readiness(runtime: Runtime) -> Readiness:
    """Ask the database and the blob store (each within its own timeout)."""
    try:
        await ping(runtime.pool)
        database = Probe(ok=True, detail="connected")
    except ShortlistError as exc:
        database = Probe(ok=False, detail=exc.message)
    try:
        await anyio.to_thread.run_sync(runtime.blobs.check)
        blob_store = Probe(ok=True, detail=runtime.blobs.name)
    except BlobStoreError as exc:
        blob_store = Probe(ok=False, detail=exc.message)
    return Readiness(database, blob_store)
