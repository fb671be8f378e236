"""MCP over stdio, for clients that launch ``shortlist mcp`` as a process.

The process opens its own :class:`~service.runtime.Runtime` (direct database
access, like ``shortlist search``) and acts for one user, fixed at start-up.
Nothing but protocol messages may reach stdout; logs go to stderr.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.heap import freeze_startup_objects
from service.mcp.caller import Caller
from service.mcp.server import build_server
from service.records import Principal
from service.services import projects
from service.storage.db import connection

if TYPE_CHECKING:
    from service.runtime import Runtime


async def serve_stdio(runtime: Runtime, principal: Principal, project: str | None) -> None:
    """Answer MCP requests on stdin/stdout until the client closes them."""
    caller = Caller(runtime, principal, default_project=project)
    if project:
        # A misspelt --project fails now, in the client's server log, not on every call.
        async with connection(runtime.pool) as conn:
            await projects.find_project(conn, principal.user_id, project)
    server = build_server(lambda _ctx: caller, runtime.settings)
    freeze_startup_objects()  # as the served app: full collections walk only what calls make
    await server.run_stdio_async()
