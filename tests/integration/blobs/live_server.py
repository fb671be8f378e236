"""Serve an ASGI app with uvicorn on 127.0.0.1 in a background thread, for real HTTP tests."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn
from litestar import Litestar


def bind_loopback() -> socket.socket:
    """A socket bound to a free port on 127.0.0.1, so its URL is known before the app exists."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


def base_url_of(sock: socket.socket) -> str:
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


@contextmanager
def run_live_server(
    app: Litestar, sock: socket.socket, *, startup_timeout: float = 10.0
) -> Iterator[str]:
    """Serve ``app`` on ``sock`` until the block ends; yields its base URL."""
    config = uvicorn.Config(app, log_level="warning", lifespan="off", ws="none", http="h11")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.01)
    try:
        yield base_url_of(sock)
    finally:
        server.should_exit = True
        thread.join(timeout=startup_timeout)
        sock.close()
