"""The MCP server: how assistants use Shortlist.

A thin door onto the same services as the REST API; no retrieval logic lives
here. Two transports share one server definition (:mod:`service.mcp.server`):

- Streamable HTTP at ``/mcp`` in the web app (:mod:`service.mcp.http`), Bearer
  API tokens, stateless with JSON responses;
- stdio via ``shortlist mcp`` (:mod:`service.mcp.stdio`).

Layout: ``caller`` (who is calling, the project default rule), ``tools`` (the
work), ``render`` (the text the model reads), ``server`` (registration,
instructions, resource, prompt).
"""

from __future__ import annotations

from service.mcp.caller import Caller, resolve_project
from service.mcp.http import McpHttp
from service.mcp.server import INSTRUCTIONS, build_server
from service.mcp.stdio import serve_stdio

__all__ = ["INSTRUCTIONS", "Caller", "McpHttp", "build_server", "resolve_project", "serve_stdio"]
