"""create_app(): the one place where routes, dependencies, errors and lifespan meet."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from litestar import Litestar, Request, Router
from litestar.types import ASGIApp, ControllerRouterHandler

from service import __version__
from service.heap import freeze_startup_objects
from service.http.api_docs import api_docs_assets_router, openapi_config
from service.http.auth import TokenAuthenticationMiddleware
from service.http.controllers.documents import DocumentController
from service.http.controllers.imports import ImportController
from service.http.controllers.mentions import MentionsController
from service.http.controllers.metrics import metrics
from service.http.controllers.projects import ProjectController
from service.http.controllers.requests import DocumentRequestController
from service.http.controllers.search import SearchController
from service.http.controllers.system import SystemController
from service.http.controllers.uploads import UploadController
from service.http.dependencies import dependencies
from service.http.errors import EXCEPTION_HANDLERS
from service.http.json_request import JsonRequest
from service.http.request_context import RequestContextMiddleware, stamp_response
from service.http.timeouts import BodyTimeoutMiddleware
from service.mcp.http import McpHttp
from service.metrics import RequestMetricsMiddleware
from service.panel.session_routes import SessionController
from service.panel.views import panel_router
from service.runtime import Runtime, build_blob_store, open_runtime
from service.services import uploads
from service.services.url_fetch import Resolver, system_resolver
from service.settings import Settings, get_settings
from service.storage.blobs import BlobStore, LocalBlobStore
from service.storage.blobs.local_routes import local_blob_router

logger = logging.getLogger(__name__)


def create_app(
    settings: Settings | None = None,
    *,
    on_start: Callable[[Runtime], Awaitable[None]] | None = None,
    resolve: Resolver = system_resolver,
) -> Litestar:
    """A new Shortlist ASGI app; nothing is opened until its lifespan starts.

    ``on_start`` runs once the runtime is open (``shortlist serve`` greets a first run there);
    ``resolve`` is how URL imports look host names up (the system's; tests pass a slow one).
    """
    settings = settings or get_settings()
    blobs = build_blob_store(settings)
    mcp_http = McpHttp(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with (
            open_runtime(settings, blobs=blobs, resolve=resolve) as runtime,
            _background_tasks(runtime),
        ):
            app.state.runtime = runtime
            if on_start is not None:
                await on_start(runtime)
            freeze_startup_objects()  # full collections then walk only what requests make
            yield

    observed = settings.metrics.enabled
    return Litestar(
        route_handlers=[
            *_route_handlers(blobs),
            *([metrics] if observed else []),
            mcp_http.route_handler(),
            panel_router(settings),
            api_docs_assets_router(),
        ],
        lifespan=[lifespan, mcp_http.lifespan],
        dependencies=dependencies(),
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=openapi_config(version=__version__),
        request_class=JsonRequest,
        before_send=[stamp_response],
        middleware=[
            RequestContextMiddleware,
            *([RequestMetricsMiddleware] if observed else []),
            _body_timeout(settings.server.body_timeout_seconds),
        ],
        debug=False,
        logging_config=None,  # the process's logging is service.logs', set by the command
    )


@contextlib.asynccontextmanager
async def _background_tasks(runtime: Runtime) -> AsyncIterator[None]:
    """The in-process worker (unless turned off) and the cache warmers, for the app's lifetime."""
    tasks: list[asyncio.Task[None]] = []
    warmup = runtime.search.warmup
    if warmup is not None:
        tasks.append(asyncio.create_task(warmup.queue_recent(runtime.pool), name="warm-at-start"))
        tasks.append(
            asyncio.create_task(
                warmup.follow_ready_documents(runtime.database.url), name="follow-ready"
            )
        )
    if runtime.settings.server.run_worker:
        tasks.append(
            asyncio.create_task(
                runtime.jobs.run_worker_forever(runtime, name="serve-worker"), name="worker"
            )
        )
    try:
        yield
    finally:
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _route_handlers(blobs: BlobStore) -> list[ControllerRouterHandler]:
    handlers: list[ControllerRouterHandler] = [_api_router()]
    if isinstance(blobs, LocalBlobStore):
        handlers.append(local_blob_router(blobs, grant_withdrawn=_grant_withdrawn))
    return handlers


def _body_timeout(seconds: float) -> Callable[[ASGIApp], ASGIApp]:
    return lambda app: BodyTimeoutMiddleware(app, seconds)


async def _grant_withdrawn(request: Request[Any, Any, Any], key: str) -> bool:
    runtime: Runtime = request.app.state.runtime
    return await uploads.grant_withdrawn(runtime, key)


def _api_router() -> Router:
    return Router(
        path="/",
        route_handlers=[
            SystemController,
            ProjectController,
            UploadController,
            DocumentController,
            SearchController,
            MentionsController,
            ImportController,
            DocumentRequestController,
            SessionController,
        ],
        middleware=[TokenAuthenticationMiddleware],
    )
