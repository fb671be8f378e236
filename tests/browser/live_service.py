"""The whole service (lifespan, worker and all) on 127.0.0.1, served by uvicorn in a thread."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import uvicorn

from service.app import create_app
from tests.conftest import make_settings


@contextmanager
def run_service(
    db_url: str,
    data_dir: Path,
    *,
    startup_timeout: float = 60.0,
    server: dict[str, object] | None = None,
    **overrides: object,
) -> Iterator[str]:
    """Serve Shortlist on a free loopback port until the block ends; yields its base URL.

    The port is bound before the app is built so the public URL (which local
    upload and download links are made from) is the real one.
    """
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base_url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    settings = make_settings(
        db_url, data_dir, server={"public_url": base_url, **(server or {})}, **overrides
    )
    config = uvicorn.Config(
        create_app(settings), log_level="warning", lifespan="on", ws="none", http="h11"
    )
    uvicorn_server = uvicorn.Server(config)
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout
    while not uvicorn_server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("The service did not start.")
        time.sleep(0.02)
    try:
        assert httpx.get(f"{base_url}/api/health", timeout=10).status_code == 200
        yield base_url
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=30)
        sock.close()
