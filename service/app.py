"""create_app(): the one place where routes, dependencies, errors and lifespan meet."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator

from litestar import Litestar, Router
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme

from service.auth import TokenAuthenticationMiddleware
from service.controllers.projects import ProjectController
from service.controllers.system import SystemController
from service.dependencies import dependencies
from service.http_errors import EXCEPTION_HANDLERS
from service.runtime import open_runtime
from service.settings import Settings, get_settings

logger = logging.getLogger(__name__)


def create_app(settings: Settings | None = None) -> Litestar:
    """A new Shortlist ASGI app; nothing is opened until its lifespan starts."""
    settings = settings or get_settings()

    @contextlib.asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        async with open_runtime(settings) as runtime:
            app.state.runtime = runtime
            yield

    return Litestar(
        route_handlers=[_api_router()],
        lifespan=[lifespan],
        dependencies=dependencies(),
        exception_handlers=EXCEPTION_HANDLERS,
        openapi_config=_openapi_config(),
        debug=False,
    )


def _api_router() -> Router:
    return Router(
        path="/",
        route_handlers=[SystemController, ProjectController],
        middleware=[TokenAuthenticationMiddleware],
        security=[{"BearerToken": []}],
    )


def _openapi_config() -> OpenAPIConfig:
    return OpenAPIConfig(
        title="Shortlist",
        version="0.1.0",
        description="Document search for AI assistants: upload, extract once, search with citations.",
        path="/schema",
        render_plugins=[SwaggerRenderPlugin()],
        components=Components(
            security_schemes={
                "BearerToken": SecurityScheme(
                    type="http", scheme="bearer", description="A Shortlist API token."
                )
            }
        ),
    )
