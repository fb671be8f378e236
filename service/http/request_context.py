"""Each request's id and its access-log line.

A request keeps the ``X-Request-ID`` it came with when that is a short token of letters,
digits, ``.``, ``_`` and ``-``; otherwise it gets a new one. The id is set in
:data:`service.logs.request_id` for the request's handling (so every log line and every job
the request queues carries it) and returned in the ``X-Request-ID`` response header.

:class:`RequestContextMiddleware` runs for every matched route; :func:`stamp_response`, a
``before_send`` hook, runs for every response, unmatched paths included, and adds the
header and the access line (``service.http.access``: method, the path the client asked
for, status, milliseconds).
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from service.logs import request_id

if TYPE_CHECKING:
    from litestar.types import ASGIApp, Message, Receive, Scope, Send

access_log = logging.getLogger("service.http.access")

REQUEST_ID_HEADER = "x-request-id"
_SCOPE_KEY = "shortlist.request"
_ACCEPTED_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")


class _Request(NamedTuple):
    id: str
    path: str
    """The path as the client sent it (a mount rewrites ``scope["path"]``)."""
    started: float | None
    """When the handling began; ``None`` for a path no route matched."""


def _incoming_id(scope: dict[str, Any]) -> str:
    for name, value in scope.get("headers", ()):
        if name == REQUEST_ID_HEADER.encode():
            candidate = bytes(value).decode("latin-1")
            if _ACCEPTED_ID.fullmatch(candidate):
                return candidate
    return uuid.uuid4().hex


def _begin(scope: dict[str, Any], started: float | None) -> _Request:
    found: _Request | None = scope.get(_SCOPE_KEY)
    if found is None:
        # A mount (MCP) works on a copy of the scope: the id it was given is the task's.
        chosen = request_id.get() or _incoming_id(scope)
        raw_path = scope.get("raw_path")
        path = bytes(raw_path).decode("latin-1") if raw_path else str(scope.get("path", ""))
        found = _Request(chosen, path.partition("?")[0], started)
        scope[_SCOPE_KEY] = found
        request_id.set(found.id)
    return found


class RequestContextMiddleware:
    """Sets the request's id before anything of a matched route runs."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = cast("dict[str, Any]", scope)
        if raw["type"] == "http":
            _begin(raw, time.perf_counter())
        await self.app(scope, receive, send)


async def stamp_response(message: Message, scope: Scope) -> None:
    """``before_send``: the id header on every response, and its access line at the end."""
    raw = cast("dict[str, Any]", scope)
    if raw["type"] != "http":
        return
    current = _begin(raw, None)
    if message["type"] == "http.response.start":
        headers: Any = list(message.get("headers", ()))
        headers.append((REQUEST_ID_HEADER.encode(), current.id.encode()))
        message["headers"] = headers
        raw[f"{_SCOPE_KEY}.status"] = int(message["status"])
    elif message["type"] == "http.response.body" and not message.get("more_body", False):
        status = raw.get(f"{_SCOPE_KEY}.status", 0)
        elapsed = (time.perf_counter() - current.started) * 1000 if current.started else None
        access_log.info(
            '"%s %s" %s%s',
            raw.get("method", ""),
            current.path,
            status,
            f" {elapsed:.0f} ms" if elapsed is not None else "",
            extra={
                "method": raw.get("method", ""),
                "path": current.path,
                "status": status,
                "duration_ms": round(elapsed, 1) if elapsed is not None else None,
                "client": (raw.get("client") or ("", 0))[0],
            },
        )
