"""Read timeouts: a client that stops sending never holds a connection for ever.

uvicorn waits as long as a client likes for a request's head, and the app waits
as long as it likes for its body. Two limits, both settings:

- ``server.header_timeout_seconds``: the whole request head (request line and
  headers) must arrive within this of the connection opening, or of the first
  byte of the next request on a kept-alive connection. Enforced by the uvicorn
  protocol ``shortlist serve`` runs (:func:`h11_protocol`), the one place that
  sees a head before it is complete; a late head gets 408 and the connection closes.
- ``server.body_timeout_seconds``: the longest pause between two pieces of a
  request body (a slow but steady upload is fine; a stalled one is not). Enforced
  inside the app (:class:`BodyTimeoutMiddleware`), so it holds whichever ASGI server
  runs it, for every route including the local store's ``PUT /blobs/…``: the
  request fails with 408 ``request_timeout`` and the connection closes.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import h11
from litestar.enums import ScopeType
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.errors import RequestTimedOut

if TYPE_CHECKING:
    from litestar.types import ASGIApp, Receive, ReceiveMessage, Scope, Send


class BodyTimeoutMiddleware:
    """Fail a request whose body stops arriving for ``seconds`` with 408."""

    def __init__(self, app: ASGIApp, seconds: float) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != ScopeType.HTTP:
            await self.app(scope, receive, send)
            return
        seconds = self.seconds
        body_complete = False

        async def receive_in_time() -> ReceiveMessage:
            # Once the body is in, receiving only waits for the client to go away (a
            # streamed response listens for that as long as it streams): not timed.
            nonlocal body_complete
            if body_complete:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), seconds)
            except TimeoutError:
                raise RequestTimedOut(
                    f"The request body stopped arriving for {seconds:g} s; send it again."
                ) from None
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_complete = True
            return message

        await self.app(scope, receive_in_time, send)


def h11_protocol(header_timeout_seconds: float) -> type[H11Protocol]:
    """uvicorn's h11 protocol, closing connections whose request head is late."""

    class HeadTimeoutH11Protocol(H11Protocol):
        _head_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._watch_head(new_connection=True)

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch_head()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_head_timer()
            super().connection_lost(exc)

        def _watch_head(self, *, new_connection: bool = False) -> None:
            """Time the head while one is due (on a new connection, or once bytes of the
            next request arrived on a kept-alive one); stop once it is complete."""
            if self.conn.their_state is not h11.IDLE:
                self._stop_head_timer()
            elif self._head_timer is None and (new_connection or self.conn.trailing_data[0]):
                self._head_timer = self.loop.call_later(header_timeout_seconds, self._head_late)

        def _stop_head_timer(self) -> None:
            if self._head_timer is not None:
                self._head_timer.cancel()
                self._head_timer = None

        def _head_late(self) -> None:
            self._head_timer = None
            if self.transport.is_closing():
                return
            error = RequestTimedOut(
                f"The request's headers did not arrive within {header_timeout_seconds:g} s."
            )
            body = json.dumps(error.to_dict()).encode()
            head = (
                f"HTTP/1.1 {error.status} Request Timeout\r\n"
                "content-type: application/json\r\n"
                f"content-length: {len(body)}\r\n"
                "connection: close\r\n\r\n"
            ).encode()
            self.transport.write(head + body)
            self.transport.close()

    return HeadTimeoutH11Protocol
