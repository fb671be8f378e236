"""The panel's page at ``/`` and its static files under ``/static/panel``.

The page is a server-rendered shell; the scripts fill it from the REST API
(signed in through :mod:`service.panel.session_routes`). Both the page and
the assets carry the headers of :mod:`service.panel.security_headers`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2
from litestar import MediaType, Response, Router, get
from litestar.datastructures import CacheControlHeader
from litestar.static_files import create_static_files_router

from extract.detect import EXTENSION_KINDS, SUPPORTED_FORMATS
from service.panel.security_headers import security_headers

if TYPE_CHECKING:
    from service.settings import Settings

PANEL_DIR = Path(__file__).parent
STATIC_PATH = "/static/panel"

_templates = jinja2.Environment(
    loader=jinja2.FileSystemLoader(PANEL_DIR / "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
)


def panel_router(settings: Settings) -> Router:
    """The page and its assets, with the panel's security headers."""
    page = render_panel_page(settings)
    headers = security_headers(settings)

    async def add_security_headers(response: Response[Any]) -> Response[Any]:
        # Static files skip the layered ``response_headers``; a hook reaches them too.
        response.headers.update(headers)
        return response

    @get("/", include_in_schema=False, exclude_from_auth=True, name="panel")
    async def panel_page() -> Response[str]:
        """The project panel."""
        return Response(page, media_type=MediaType.HTML, headers={"Cache-Control": "no-cache"})

    assets = create_static_files_router(
        path=STATIC_PATH,
        directories=[PANEL_DIR / "static"],
        name="panel-static",
        cache_control=CacheControlHeader(no_cache=True),
        opt={"exclude_from_auth": True},
        after_request=add_security_headers,
    )
    return Router(
        path="/",
        route_handlers=[panel_page, assets],
        after_request=add_security_headers,
        include_in_schema=False,
    )


def render_panel_page(settings: Settings) -> str:
    """The page's HTML; it holds no user data, so it is rendered once."""
    return _templates.get_template("panel.html.j2").render(
        static_path=STATIC_PATH,
        accept=",".join(
            sorted(EXTENSION_KINDS)
        ),  # what the picker offers first; drops are not filtered
        formats=SUPPORTED_FORMATS,
        max_upload_bytes=settings.storage.max_upload_bytes,
        max_upload_label=_size_label(settings.storage.max_upload_bytes),
    )


def _size_label(size: int) -> str:
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.3g} {unit}"
    return f"{size} bytes"
