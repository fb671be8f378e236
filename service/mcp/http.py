"""MCP over Streamable HTTP at ``/mcp``, inside the Litestar app.

Stateless mode with JSON responses: every POST carries one JSON-RPC exchange
and no session lives on the server, so any replica behind a load balancer can
answer any request. Each request is authenticated here, with the same Bearer
API tokens as the REST API, before the SDK sees it; the resolved caller rides
on the ASGI scope, which the SDK hands to tools as the request context.

The SDK's session manager runs once, so :class:`McpHttp` is built per app, and
its :meth:`McpHttp.lifespan` joins the app's lifespan (Litestar does not
forward lifespan events to mounted apps).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator
from urllib.parse import urlsplit

from litestar import Litestar, asgi
from litestar.datastructures import Headers
from litestar.handlers import ASGIRouteHandler
from litestar.types import Receive, Scope, Send
from mcp.server.mcpserver import Context
from mcp.server.transport_security import TransportSecuritySettings

from service.errors import NotAuthenticated, ShortlistError
from service.http.auth import bearer_token, principal_for_token
from service.mcp.body_limit import BodyLimit, request_body_limit
from service.mcp.caller import Caller
from service.mcp.server import build_server
from service.settings import Settings

logger = logging.getLogger(__name__)

PATH = "/mcp"
#: Where the authenticated caller rides on the ASGI scope.
CALLER_SCOPE_KEY = "shortlist.mcp.caller"


class McpHttp:
    """The MCP server, its session manager, the ``/mcp`` route and the lifespan that runs it."""

    def __init__(self, settings: Settings) -> None:
        self.server = build_server(caller_from_request, settings)
        self.body_limit = BodyLimit(settings)
        self.server.streamable_http_app(
            streamable_http_path=PATH,
            stateless_http=True,
            json_response=True,
            transport_security=transport_security(settings),
            max_request_body_size=request_body_limit(settings),
        )
        self.session_manager = self.server.session_manager

    @contextlib.asynccontextmanager
    async def lifespan(self, _: Litestar) -> AsyncIterator[None]:
        async with self.session_manager.run():
            yield

    def route_handler(self) -> ASGIRouteHandler:
        @asgi(PATH, is_mount=True, copy_scope=True, name="mcp", include_in_schema=False)
        async def mcp_endpoint(scope: Scope, receive: Receive, send: Send) -> None:
            await self.handle(scope, receive, send)

        return mcp_endpoint

    async def handle(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Authenticate, refuse a body over the size limit (as a JSON-RPC error), then let the
        SDK's transport answer (it checks Host and Origin)."""
        runtime = scope["app"].state.runtime
        try:
            principal = await principal_for_token(runtime, bearer_token(Headers.from_scope(scope)))
        except ShortlistError as error:
            await send_error(send, error)
            return
        if self.body_limit.declared_too_large(scope):
            await self.body_limit.refuse(receive, send)
            return
        receive, send = self.body_limit.guard(receive, send)
        scope[CALLER_SCOPE_KEY] = Caller(runtime, principal)  # type: ignore[literal-required]
        await self.session_manager.handle_request(scope, receive, send)  # type: ignore[arg-type]


def caller_from_request(ctx: Context) -> Caller:
    """The caller :meth:`McpHttp.handle` left on the request's scope."""
    request = ctx.request_context.request
    caller = getattr(request, "scope", {}).get(CALLER_SCOPE_KEY)
    if not isinstance(caller, Caller):
        raise NotAuthenticated()
    return caller


async def send_error(send: Send, error: ShortlistError) -> None:
    """The REST API's JSON error envelope, with ``WWW-Authenticate`` on a 401."""
    body = json.dumps(error.to_dict()).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
    ]
    if isinstance(error, NotAuthenticated):
        headers.append((b"www-authenticate", b'Bearer realm="shortlist"'))
    await send({"type": "http.response.start", "status": error.status, "headers": headers})
    await send({"type": "http.response.body", "body": body, "more_body": False})


def allowed_hosts(settings: Settings) -> list[str]:
    """``server.allowed_hosts`` plus the public URL's host, each with any port."""
    hosts = list(settings.server.allowed_hosts)
    public = urlsplit(settings.public_url).hostname
    if public:
        hosts.append(f"[{public}]" if ":" in public else public)
    unique = list(dict.fromkeys(host.strip().lower() for host in hosts if host.strip()))
    return [pattern for host in unique for pattern in (host, f"{host}:*")]


def transport_security(settings: Settings) -> TransportSecuritySettings:
    """DNS-rebinding protection: only these Host headers, and Origins on these hosts."""
    hosts = allowed_hosts(settings)
    origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )
