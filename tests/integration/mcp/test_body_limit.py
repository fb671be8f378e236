"""Issue #24, item 6: an MCP request over the size limit gets an answer a client can show.

The official client over Streamable HTTP against a real uvicorn app whose upload limit is
1 MB. A text over the upload limit but within the transport's is the tool's ``isError``
(``file_too_large``); a request over the transport's limit (5 MB: over the SDK's own 4 MiB
default too) is a JSON-RPC error naming the limit, not a bare ``413 text/plain`` or a
reset, whether it declares its length or streams without one; and the session goes on.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from mcp.shared.exceptions import MCPError

from service.mcp.body_limit import megabytes, request_body_limit, too_large_message
from service.settings import Settings
from tests.conftest import make_settings
from tests.integration.documents.conftest import bearer, new_user
from tests.integration.mcp.conftest import http_client, live_app, text_of

pytestmark = pytest.mark.anyio

MB = 1_048_576
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _settings(db_url: str, tmp_path: Path) -> Settings:
    return make_settings(db_url, tmp_path, storage={"max_upload_bytes": MB})


def _notes(size: int) -> str:
    line = "Glaciers retreat and the firn compacts under new snow.\n"
    return "# Field notes\n\n" + line * (size // len(line) + 1)


async def test_add_document_over_the_limits_is_refused_with_a_message_naming_them(
    db_url: str, tmp_path: Path
) -> None:
    settings = _settings(db_url, tmp_path)
    alice = await new_user(db_url, "alice")
    with live_app(settings) as base_url:
        async with http_client(base_url, alice.token) as client:
            tools = {tool.name: tool for tool in (await client.list_tools()).tools}
            over_upload = await client.call_tool(
                "add_document", {"name": "notes.md", "content": _notes(MB + 1000)}
            )
            with pytest.raises(MCPError) as over_transport:
                await client.call_tool(
                    "add_document", {"name": "big.md", "content": _notes(5 * MB)}
                )
            kept = await client.call_tool(
                "add_document", {"name": "small.md", "content": _notes(2000)}
            )

    assert "at most 1 MB" in (tools["add_document"].description or "")
    assert over_upload.is_error
    assert "the limit is 1 MB" in text_of(over_upload)
    assert over_transport.value.error.message == too_large_message(settings)
    assert megabytes(request_body_limit(settings)) in over_transport.value.error.message
    assert "at most 1 MB" in over_transport.value.error.message
    assert not kept.is_error, text_of(kept)


async def _streamed(data: bytes) -> AsyncIterator[bytes]:
    for start in range(0, len(data), 64 * 1024):
        yield data[start : start + 64 * 1024]


async def test_a_streamed_request_over_the_limit_is_a_json_rpc_error_too(
    db_url: str, tmp_path: Path
) -> None:
    settings = _settings(db_url, tmp_path)
    alice = await new_user(db_url, "alice")
    call = (
        b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add_document",'
        b' "arguments": {"name": "big.md", "content": "' + b"x" * (3 * MB) + b'"}}}'
    )
    with live_app(settings) as base_url:
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
            declared = await client.post(
                "/mcp", content=call, headers={**MCP_HEADERS, **bearer(alice.token)}
            )
            streamed = await client.post(
                "/mcp", content=_streamed(call), headers={**MCP_HEADERS, **bearer(alice.token)}
            )
    for answer in (declared, streamed):
        assert answer.status_code == 413
        assert answer.headers["content-type"] == "application/json"
        error = answer.json()["error"]
        assert error["message"] == too_large_message(settings)
        assert error["data"] == {"code": "request_too_large", "limit": request_body_limit(settings)}
