"""The API reference at ``/schema``: the OpenAPI document and a Swagger UI that works offline.

Litestar's renderers load their JavaScript from a CDN by default, which leaves the page blank
on a machine without internet. The Swagger UI assets here come from the ``swagger-ui-py``
package (Apache-2.0), which ships Swagger UI 5 (the first to read OpenAPI 3.1) inside its
wheel; this process serves them. The package is located, not imported: its ``__init__``
registers adapters for other web frameworks that Shortlist has no use for.

- ``/schema``, ``/schema/swagger``: the interactive reference;
- ``/schema/openapi.json`` (and ``.yaml``): the OpenAPI document itself.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from litestar import Router
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import JsonRenderPlugin, SwaggerRenderPlugin, YamlRenderPlugin
from litestar.openapi.spec import Components, SecurityScheme
from litestar.static_files import create_static_files_router

from service.http.operations import BEARER_SCHEME, SESSION_SCHEME
from service.panel.session_cookie import SESSION_COOKIE

SCHEMA_PATH = "/schema"
ASSETS_PATH = "/static/api-docs"


def _swagger_ui_static_dir() -> Path:
    spec = importlib.util.find_spec("swagger_ui")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - a dependency
        raise RuntimeError("the swagger-ui-py package is not installed")
    return Path(next(iter(spec.submodule_search_locations))) / "static"


ASSETS_DIR = _swagger_ui_static_dir()


def openapi_config(version: str) -> OpenAPIConfig:
    """The OpenAPI document's metadata and its one renderer, pointed at local assets."""
    return OpenAPIConfig(
        title="Shortlist",
        version=version,
        description="Document search for AI assistants: upload, extract once, search with citations.",
        path=SCHEMA_PATH,
        render_plugins=[
            SwaggerRenderPlugin(
                js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
                css_url=f"{ASSETS_PATH}/swagger-ui.css",
                standalone_preset_js_url=f"{ASSETS_PATH}/swagger-ui-standalone-preset.js",
                favicon=f'<link rel="icon" type="image/png" href="{ASSETS_PATH}/favicon-32x32.png">',
                path=["/", "/swagger"],
            ),
            JsonRenderPlugin(),
            YamlRenderPlugin(),
        ],
        use_handler_docstrings=True,
        components=Components(
            security_schemes={
                BEARER_SCHEME: SecurityScheme(
                    type="http", scheme="bearer", description="A Shortlist API token."
                ),
                SESSION_SCHEME: SecurityScheme(
                    type="apiKey",
                    security_scheme_in="cookie",
                    name=SESSION_COOKIE,
                    description="The panel's session (`POST /api/session`); writes also "
                    "need its `X-CSRF-Token` header.",
                ),
            }
        ),
    )


def api_docs_assets_router() -> Router:
    """Swagger UI's JavaScript, CSS and icons, served from the installed package."""
    return create_static_files_router(
        path=ASSETS_PATH,
        directories=[ASSETS_DIR],
        name="api-docs-static",
        include_in_schema=False,
    )
