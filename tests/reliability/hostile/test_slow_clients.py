"""Slow and stalled clients are timed out by a real `shortlist serve`, over raw sockets.

The timeouts are set to one second here (settings `server.header_timeout_seconds` and
`server.body_timeout_seconds`); before, each of these connections stayed open as long as
the client liked (more than 60 s when tried).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import httpx
import pytest

from tests.conftest import create_database, drop_database
from tests.integration.documents.conftest import make_pdf, new_user

pytestmark = pytest.mark.timeout(120)

TIMEOUT = 1.0
#: How much later than the timeout the answer may come on a busy machine.
SLACK = 4.0


class Served(NamedTuple):
    port: int
    token: str
    project_id: str
    data_dir: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def served(
    server_url: str, template_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    name = f"shortlist_test_slow_{uuid.uuid4().hex[:12]}"
    db_url = create_database(server_url, name, template=template_database)
    data_dir = tmp_path_factory.mktemp("slow-clients")
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SHORTLIST_DATA_DIR": str(data_dir),
        "SHORTLIST_SEARCH__RERANKER": "none",
        "SHORTLIST_SERVER__HEADER_TIMEOUT_SECONDS": str(TIMEOUT),
        "SHORTLIST_SERVER__BODY_TIMEOUT_SECONDS": str(TIMEOUT),
    }
    log = (data_dir / "serve.log").open("wb")
    server = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port), "--no-worker"],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2).is_success:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None and time.monotonic() < deadline, "serve did not start"
            time.sleep(0.2)
        alice = asyncio.run(new_user(db_url, "alice"))
        yield Served(port, alice.token, str(alice.project.id), data_dir)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
        drop_database(server_url, name)


def _connect(served: Served) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", served.port), timeout=30)
    sock.settimeout(TIMEOUT + SLACK + 10)
    return sock


def _answer(sock: socket.socket) -> tuple[bytes, float]:
    """Everything the server sends until it closes the connection, and how long that took."""
    started = time.monotonic()
    received = b""
    while chunk := sock.recv(65536):
        received += chunk
    return received, time.monotonic() - started


def _envelope(answer: bytes) -> dict[str, Any]:
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), answer[:200]
    envelope: dict[str, Any] = json.loads(body)
    return envelope


def test_a_connection_that_sends_nothing_is_closed_with_408(served: Served) -> None:
    with _connect(served) as sock:
        answer, took = _answer(sock)

    assert _envelope(answer)["code"] == "request_timeout"
    assert took < TIMEOUT + SLACK


def test_headers_that_never_finish_get_408_even_when_dripped(served: Served) -> None:
    with _connect(served) as sock:
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        for _ in range(4):  # one header byte every 0.4 s: never idle, never done
            time.sleep(0.4)
            try:
                sock.sendall(b"X")
            except OSError:
                break
        answer, _ = _answer(sock)
        took = time.monotonic() - started

    assert _envelope(answer)["code"] == "request_timeout"
    assert took < TIMEOUT + SLACK


def test_a_kept_alive_connection_whose_next_headers_stall_gets_408(served: Served) -> None:
    with _connect(served) as sock:
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        first = b""
        while b"\r\n\r\n" not in first:
            first += sock.recv(65536)
        sock.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        answer, took = _answer(sock)

    assert first.startswith(b"HTTP/1.1 200")
    assert b"request_timeout" in answer
    assert took < TIMEOUT + SLACK


def test_a_request_body_that_stops_arriving_gets_408_request_timeout(served: Served) -> None:
    body = json.dumps({"name": "A project whose name never fully arrives"}).encode()
    with _connect(served) as sock:
        sock.sendall(
            b"POST /api/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            + f"Authorization: Bearer {served.token}\r\n".encode()
            + b"Content-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
            + body[:10]
        )
        answer, took = _answer(sock)

    envelope = _envelope(answer)
    assert envelope["code"] == "request_timeout"
    assert "stopped arriving" in envelope["message"]
    assert took < TIMEOUT + SLACK


def test_a_stalled_put_to_the_local_store_gets_408_and_leaves_no_file(served: Served) -> None:
    pdf = make_pdf(["Sea ice thins each summer."])
    base = f"http://127.0.0.1:{served.port}"
    headers = {"Authorization": f"Bearer {served.token}"}
    grant = httpx.post(
        f"{base}/api/uploads",
        json={
            "project_id": served.project_id,
            "filename": "ice.pdf",
            "content_type": "application/pdf",
            "size": len(pdf),
        },
        headers=headers,
    ).json()
    url = urlsplit(grant["url"])
    with _connect(served) as sock:
        sock.sendall(
            f"PUT {url.path}?{url.query} HTTP/1.1\r\nHost: 127.0.0.1\r\n".encode()
            + b"Content-Type: application/pdf\r\n"
            + f"Content-Length: {len(pdf)}\r\n\r\n".encode()
            + pdf[: len(pdf) // 2]
        )
        answer, took = _answer(sock)

    assert _envelope(answer)["code"] == "request_timeout"
    assert took < TIMEOUT + SLACK
    assert not [path for path in (served.data_dir / "blobs").rglob("*") if path.is_file()]
    # The grant is still good for a complete upload.
    sent = httpx.put(grant["url"], content=pdf, headers=grant["headers"])
    assert sent.status_code == 201, sent.text
