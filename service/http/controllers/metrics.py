"""``GET /metrics``: Prometheus text, when ``metrics.enabled``; behind ``metrics.token`` if set."""

from __future__ import annotations

import hmac
from typing import Any

from litestar import Request, Response, get

from service.errors import NotAuthenticated
from service.http.auth import bearer_token
from service.jobs import EXTRACTION_QUEUE
from service.metrics import CONTENT_TYPE, scrape
from service.runtime import Runtime


@get("/metrics", include_in_schema=False, name="metrics")
async def metrics(request: Request[Any, Any, Any]) -> Response[bytes]:
    """Every metric, in the Prometheus text exposition format."""
    runtime: Runtime = request.app.state.runtime
    expected = runtime.settings.metrics.token
    if expected is not None:
        presented = bearer_token(request.headers) or ""
        if not hmac.compare_digest(presented.encode(), expected.get_secret_value().encode()):
            raise NotAuthenticated(
                "Scraping /metrics needs `Authorization: Bearer <metrics token>` "
                "(the SHORTLIST_METRICS__TOKEN setting)."
            )
    body = await scrape(runtime, queue=EXTRACTION_QUEUE)
    return Response(body, media_type=CONTENT_TYPE)
