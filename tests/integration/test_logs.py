"""The service's log as an operator reads it: JSON lines joined by request id, and a quiet
text log (no job-queue chatter, MCP calls under their own path, a hang-up is not an error)."""

from __future__ import annotations

import io
import json
import logging
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.requests import ClientDisconnect

from service.logs import ClientDisconnectFilter, configure_logging
from service.settings import Settings
from tests.conftest import make_settings
from tests.integration.mcp.conftest import live_app
from tests.integration.mcp.test_http import INITIALIZE
from tests.integration.test_metrics import _create_user, _upload, _wait_ready


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """Whatever a test configures, the process's logging is put back afterwards."""
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    levels = {name: logging.getLogger(name).level for name in logging.root.manager.loggerDict}
    try:
        yield
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        for name, saved in levels.items():
            logging.getLogger(name).setLevel(saved)


def _json_lines(out: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]


def test_json_lines_carry_the_request_id_into_the_job_the_request_queued(
    db_url: str, tmp_path: Path, restored_logging: None
) -> None:
    settings = make_settings(db_url, tmp_path, log={"format": "json"})
    token, project_id = _create_user(settings)
    out = io.StringIO()
    configure_logging(settings, out)
    with live_app(settings) as url:
        with httpx.Client(
            base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as api:
            document_id = _upload(api, project_id, b"# Tides\n\nHigh water at noon.\n")
            registered_by = next(
                line["request_id"]
                for line in _json_lines(out)
                if line.get("path") == "/api/documents" and line.get("method") == "POST"
            )
            _wait_ready(api, document_id)
            chosen = api.get("/api/me", headers={"X-Request-ID": "trace-42"})
            missing = api.get("/no/such/page")
        time.sleep(0.2)

    lines = _json_lines(out)
    assert lines, "nothing was logged"
    assert all(
        {"time", "level", "logger", "message", "request_id"} <= line.keys() for line in lines
    )
    job_lines = [
        line
        for line in lines
        if document_id in line["message"] and line["logger"] != "service.http.access"
    ]
    assert job_lines and all(line["request_id"] == registered_by for line in job_lines), job_lines
    access = [line for line in lines if line["logger"] == "service.http.access"]
    me = [line for line in access if line.get("path") == "/api/me"]
    assert chosen.headers["x-request-id"] == "trace-42"
    assert me and me[0]["request_id"] == "trace-42" and me[0]["status"] == 200
    assert missing.status_code == 404 and len(missing.headers["x-request-id"]) == 32
    assert any(line.get("path") == "/no/such/page" for line in access)


def test_the_text_log_is_quiet_and_names_mcp_paths(
    settings: Settings, restored_logging: None
) -> None:
    token, _ = _create_user(settings)
    out = io.StringIO()
    configure_logging(settings, out)
    call: dict[str, Any] = INITIALIZE
    with live_app(settings) as url:
        answered = httpx.post(
            f"{url}/mcp",
            json=call,
            headers={
                "Authorization": f"Bearer {token}",
                "Accept": "application/json, text/event-stream",
            },
            timeout=30,
        )
        time.sleep(0.2)
    text = out.getvalue()

    assert answered.status_code == 200, answered.text
    assert '"POST /mcp" 200' in text, text
    assert "Terminating session" not in text
    assert "procrastinate" not in text
    assert all(not line.startswith("{") for line in text.splitlines())


def test_a_client_hanging_up_is_logged_as_info_without_a_traceback() -> None:
    logger = logging.getLogger("mcp.server.streamable_http")
    try:
        raise ClientDisconnect()
    except ClientDisconnect:
        record = logger.makeRecord(
            logger.name, logging.ERROR, __file__, 1, "Error handling POST request", (), None
        )
        import sys

        record.exc_info = sys.exc_info()
    ClientDisconnectFilter().filter(record)

    assert record.levelno == logging.INFO
    assert record.exc_info is None
    assert record.getMessage() == "the client disconnected"
