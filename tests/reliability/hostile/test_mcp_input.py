"""Promise 2 over MCP: hostile tool arguments come back as tool errors the model can read."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.mcp.conftest import http_client, text_of
from tests.reliability.hostile.conftest import Target

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

HOSTILE = ["a\x00b", "\u202eevil", "../../etc/passwd", "x" * 20_000, "", " "]

CALLS: list[tuple[str, dict[str, Any]]] = [
    *[("list_documents", {"project": value}) for value in HOSTILE],
    *[("read_document", {"document": value}) for value in HOSTILE],
    *[("read_document", {"document": "field-notes.md", "pages": value}) for value in HOSTILE],
    *[("search_documents", {"query": value}) for value in HOSTILE],
    *[("find_mentions", {"terms": [value]}) for value in HOSTILE],
    # Write tools: every one of these is refused, so the shared project is left as it was.
    *[("add_document", {"name": value, "content": "hostile test"}) for value in HOSTILE],
    *[("add_document", {"name": "hostile.md", "content": v}) for v in ("a\x00b", "", " ")],
    *[("import_url", {"url": value}) for value in HOSTILE],
    *[("request_document", {"title": v}) for v in ("a\x00b", "\u202eevil", "x" * 20_000, "")],
    *[("request_document", {"title": "t", "source_url": value}) for value in HOSTILE[:4]],
    *[("request_document", {"title": "t", "reason": v}) for v in ("a\x00b", "x" * 20_000)],
]

WRITE_TOOLS = {"add_document", "import_url", "request_document"}


async def test_hostile_tool_arguments_get_an_answer_never_a_crash(target: Target) -> None:
    async with http_client(target.url, target.token) as client:
        for name, arguments in CALLS:
            result = await client.call_tool(name, arguments)
            text = text_of(result)
            assert text, f"{name} {arguments!r:.80}: empty answer"
            unhandled = "Error executing tool" in text or "Traceback" in text
            assert not unhandled, f"{name} {arguments!r:.80}: {text[:300]}"
            if name in WRITE_TOOLS:
                assert result.is_error, f"{name} {arguments!r:.80} was accepted: {text[:300]}"
