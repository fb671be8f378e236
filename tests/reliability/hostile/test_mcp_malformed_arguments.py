"""Malformed MCP requests get an answer a model can act on, never a crash in the logs."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, LATEST_PROTOCOL_VERSION

from tests.integration.mcp.conftest import http_client, text_of
from tests.reliability.hostile.conftest import Target

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]


def _no_crash_logged(records: list[logging.LogRecord]) -> list[str]:
    return [
        f"{record.name}: {record.getMessage()}"
        for record in records
        if record.exc_info or record.levelno >= logging.ERROR
    ]


async def test_prompt_without_its_argument_is_invalid_params_naming_it(
    target: Target, caplog: pytest.LogCaptureFixture
) -> None:
    errors = []
    async with http_client(target.url, target.token) as client:
        for arguments in (None, {}, {"topic": "  "}):
            with pytest.raises(MCPError) as raised:
                await client.get_prompt("research-topic", arguments)
            errors.append(raised.value)
        answered = await client.get_prompt("research-topic", {"topic": "tides"})

    assert {error.code for error in errors} == {INVALID_PARAMS}
    for error in errors:
        assert "research-topic needs the argument 'topic'" in error.message
    assert "tides" in answered.messages[0].content.text  # type: ignore[union-attr]
    assert _no_crash_logged(caplog.records) == []


async def test_unknown_prompt_or_argument_is_invalid_params(
    target: Target, caplog: pytest.LogCaptureFixture
) -> None:
    async with http_client(target.url, target.token) as client:
        with pytest.raises(MCPError) as unknown:
            await client.get_prompt("no-such-prompt", {"topic": "tides"})
        with pytest.raises(MCPError) as extra:
            await client.get_prompt("research-topic", {"topic": "tides", "depth": "3"})

    assert unknown.value.code == INVALID_PARAMS
    assert "the prompts are: research-topic" in unknown.value.message
    assert extra.value.code == INVALID_PARAMS
    assert "has no argument 'depth'" in extra.value.message
    assert "topic (required" in extra.value.message
    assert _no_crash_logged(caplog.records) == []


@pytest.fixture
def raw_session(target: Target) -> Iterator[tuple[httpx.Client, str | None]]:
    """A hand-made Streamable HTTP session: the SDK's client refuses to send non-strings."""
    with target.client() as http:
        opened = _rpc(
            http,
            None,
            "initialize",
            {
                "protocolVersion": LATEST_PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            },
        )
        assert opened.status_code == 200, opened.text
        session = opened.headers.get("mcp-session-id")
        http.post(
            "/mcp",
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={
                "Accept": "application/json, text/event-stream",
                **({"mcp-session-id": session} if session else {}),
            },
        )
        yield http, session


def _rpc(http: httpx.Client, session: str | None, method: str, params: Any) -> httpx.Response:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if session is not None:
        headers["mcp-session-id"] = session
    body = {"jsonrpc": "2.0", "id": 7, "method": method, "params": params}
    return http.post("/mcp", content=json.dumps(body), headers=headers)


@pytest.mark.parametrize("topic", [5, ["tides"], None, {"q": "tides"}])
def test_prompt_argument_that_is_not_a_string_is_invalid_params_saying_so(
    raw_session: tuple[httpx.Client, str | None], topic: Any, caplog: pytest.LogCaptureFixture
) -> None:
    http, session = raw_session
    answer = _rpc(
        http, session, "prompts/get", {"name": "research-topic", "arguments": {"topic": topic}}
    ).json()

    assert answer["error"]["code"] == INVALID_PARAMS
    assert "give 'topic' as text" in answer["error"]["message"]
    assert _no_crash_logged(caplog.records) == []


def test_tool_arguments_that_are_not_an_object_are_invalid_params_saying_so(
    raw_session: tuple[httpx.Client, str | None],
) -> None:
    http, session = raw_session
    answer = _rpc(
        http, session, "tools/call", {"name": "search_documents", "arguments": "tides"}
    ).json()

    assert answer["error"]["code"] == INVALID_PARAMS
    assert "one JSON object of named arguments" in answer["error"]["message"]


TOOL_MISTAKES: list[tuple[str, dict[str, Any], str]] = [
    ("search_documents", {}, "'query' is required"),
    ("search_documents", {"query": 5}, "'query': input should be a valid string"),
    ("search_documents", {"query": "tides", "top_k": "many"}, "'top_k': input should be"),
    ("read_document", {"document": ["a"]}, "'document': input should be a valid string"),
    ("find_mentions", {"terms": "tides", "match": "most"}, "'match': input should be"),
]


async def test_tool_arguments_that_miss_the_schema_are_an_is_error_in_plain_words(
    target: Target, caplog: pytest.LogCaptureFixture
) -> None:
    async with http_client(target.url, target.token) as client:
        results = [
            (expected, await client.call_tool(name, arguments))
            for name, arguments, expected in TOOL_MISTAKES
        ]

    for expected, result in results:
        text = text_of(result)
        assert result.is_error, text
        assert expected in text, text
        assert "(error: invalid_request)" in text
        assert (
            "takes query (a string, required)" in text
            or "takes document" in text
            or ("takes terms" in text)
        )
        assert "pydantic" not in text and "validation error" not in text, text
    assert _no_crash_logged(caplog.records) == []
