"""`shortlist serve` on a machine with no PostgreSQL configured: the embedded defaults."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import psutil
import pytest

pytestmark = pytest.mark.embedded


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _postgres_processes(data_dir: Path) -> list[psutil.Process]:
    found = []
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if process.info["name"] == "postgres" and str(data_dir) in cmdline:
            found.append(process)
    return found


def test_serve_with_no_configuration_answers_health_on_embedded_postgres() -> None:
    data_dir = Path(tempfile.mkdtemp(prefix="shortlist-serve-"))
    port = _free_port()
    env = {key: value for key, value in os.environ.items() if key != "DATABASE_URL"}
    env.update(SHORTLIST_DATA_DIR=str(data_dir), SHORTLIST_SEARCH__RERANKER="none")
    log_path = data_dir / "serve.log"
    log = log_path.open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "service.cli", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 90
        health = None
        while time.monotonic() < deadline:
            try:
                health = httpx.get(f"http://127.0.0.1:{port}/api/health", timeout=2)
                if health.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert server.poll() is None, log_path.read_text()
            time.sleep(0.5)
        assert health is not None and health.status_code == 200
        assert health.json()["database"]["ok"] is True
        assert _postgres_processes(data_dir / "postgres"), (
            "the embedded server runs in the data dir"
        )
        assert "No users yet. Create one and get a token: shortlist user create NAME" in (
            log_path.read_text()
        ), "a first run says what to do next"

        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
        deadline = time.monotonic() + 20
        while _postgres_processes(data_dir / "postgres") and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _postgres_processes(data_dir / "postgres") == [], "serve stops the server it started"
    finally:
        if server.poll() is None:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()
        shutil.rmtree(data_dir, ignore_errors=True)
