"""How large one POST to ``/mcp`` may be, and the refusal an MCP client can show.

The SDK refuses a body over its limit (4 MiB by default, far under the upload limit) with a
bare ``413 text/plain`` and without reading the rest, so a client still sending sees the
connection reset, and the official client reports only "Server returned an error
response". Here:

- the limit follows the upload limit (:func:`request_body_limit`): an ``add_document`` text
  at ``storage.max_upload_bytes``, JSON-escaped, fits with its envelope; a text over the
  upload limit but within this one reaches the tool, which answers ``isError``
  (``file_too_large``) naming the upload limit;
- a body over it is read to its end (up to :data:`DRAIN_BYTES` more, so the client gets to
  read the answer) and answered ``413`` with a JSON-RPC error whose message names both
  limits, which the official client raises as the call's error (:class:`BodyLimit`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from litestar.datastructures import Headers

from service.http.operations import REQUEST_TOO_LARGE

if TYPE_CHECKING:
    from litestar.types import HTTPRequestEvent, Message, Receive, ReceiveMessage, Scope, Send

    from service.settings import Settings

ENVELOPE_BYTES = 64 * 1024
"""Room for the JSON-RPC envelope and the tool's other arguments."""
DRAIN_BYTES = 64 * 1024 * 1024
"""Most of an oversized body read (and dropped) so the client can read the refusal; past it
the connection is closed instead."""
INVALID_REQUEST = -32600
"""JSON-RPC's code for a request the server will not take."""


def request_body_limit(settings: Settings) -> int:
    """Most bytes one POST to ``/mcp`` may carry: a text at the upload limit, with an eighth
    more for JSON escaping (newlines, quotes), and its envelope."""
    upload = settings.storage.max_upload_bytes
    return upload + upload // 8 + ENVELOPE_BYTES


def megabytes(size: int) -> str:
    """A size as the limits are stated: "50 MB", "1.5 MB"."""
    return f"{size / 1_048_576:.3g} MB"


def add_document_limit_sentence(settings: Settings) -> str:
    """What the ``add_document`` tool's description says of its limit."""
    return (
        f"The text may be at most {megabytes(settings.storage.max_upload_bytes)}; "
        "for a larger file ask the user to upload it."
    )


def too_large_message(settings: Settings) -> str:
    """The refusal of a body over :func:`request_body_limit`, naming both limits."""
    return (
        f"The MCP request is larger than /mcp accepts "
        f"({megabytes(request_body_limit(settings))}). add_document takes a text of at most "
        f"{megabytes(settings.storage.max_upload_bytes)} (SHORTLIST_STORAGE__MAX_UPLOAD_BYTES); "
        "upload a larger file with `shortlist upload` or the panel instead."
    )


class BodyLimit:
    """Refuse a POST body over ``limit`` with a JSON-RPC error, in front of the SDK.

    A declared ``Content-Length`` over the limit is refused before the SDK sees the request;
    a body without one is counted as the SDK reads it, and the SDK's own ``413`` (given the
    same limit) is replaced by the JSON-RPC error once the rest is drained.
    """

    def __init__(self, settings: Settings) -> None:
        self.limit = request_body_limit(settings)
        self.body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": None,
                "error": {
                    "code": INVALID_REQUEST,
                    "message": too_large_message(settings),
                    "data": {"code": REQUEST_TOO_LARGE.code, "limit": self.limit},
                },
            }
        ).encode()

    def declared_too_large(self, scope: Scope) -> bool:
        declared = Headers.from_scope(scope).get("content-length", "")
        return declared.isdigit() and int(declared) > self.limit

    async def refuse(self, receive: Receive, send: Send) -> None:
        """Drain what the client is still sending, then answer the JSON-RPC error."""
        await _drain(receive, DRAIN_BYTES)
        await self._send_refusal(send)

    async def _send_refusal(self, send: Send) -> None:
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(self.body)).encode()),
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": self.body, "more_body": False})

    def guard(self, receive: Receive, send: Send) -> tuple[Receive, Send]:
        """``receive`` that drains a body once it passes the limit, and ``send`` that turns
        the SDK's bare 413 into the JSON-RPC error."""
        received = 0
        replaced = False

        async def counting_receive() -> ReceiveMessage:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit and message.get("more_body", False):
                    await _drain(receive, DRAIN_BYTES)
                    last: HTTPRequestEvent = {
                        "type": "http.request",
                        "body": message.get("body", b""),
                        "more_body": False,
                    }
                    return last
            return message

        async def rewriting_send(message: Message) -> None:
            nonlocal replaced
            if message["type"] == "http.response.start" and message["status"] == 413:
                replaced = True
                await self._send_refusal(send)
                return
            if replaced:
                return  # the SDK's text/plain body
            await send(message)

        return counting_receive, rewriting_send


async def _drain(receive: Receive, most: int) -> None:
    """Read and drop the rest of a request body, at most ``most`` bytes of it."""
    dropped = 0
    while dropped <= most:
        message = await receive()
        if message["type"] != "http.request":
            return
        dropped += len(message.get("body", b""))
        if not message.get("more_body", False):
            return
