"""Pictures over MCP, through the SDK's own client: image blocks arrive, decode, and are sized
for a model; every result of a PDF links its page image and the original at its page."""

from __future__ import annotations

import base64
import io
from typing import Any

import pytest
from PIL import Image

from service.mcp.pictures import MAX_PICTURES, MODEL_LONG_EDGE
from tests.integration.mcp.conftest import QUOKKA, Library, http_client, text_of

pytestmark = pytest.mark.anyio


def _images(result: Any) -> list[tuple[str, Image.Image]]:
    """Each image block with the text block before it, the image decoded."""
    found = []
    blocks = result.content
    for index, block in enumerate(blocks):
        if block.type == "image":
            assert block.mime_type == "image/png"
            before = blocks[index - 1]
            assert before.type == "text"
            image = Image.open(io.BytesIO(base64.b64decode(block.data)))
            image.load()
            found.append((before.text, image))
    return found


async def test_passages_come_back_as_pictures_each_named_by_its_result(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool(
            "search_documents",
            {"query": QUOKKA, "project": "research", "top_k": 6, "images": "passages"},
        )
    assert not result.is_error, text_of(result)
    pictures = _images(result)
    assert 1 <= len(pictures) <= MAX_PICTURES
    label, first = pictures[0]
    assert label.startswith("[1] report.pdf — p. 3: the passage on its page, marked")
    for _, image in pictures:
        assert max(image.size) <= MODEL_LONG_EDGE
    assert first.width > first.height  # a crop of the passage, not the whole page


async def test_by_default_results_link_their_page_and_original(
    base_url: str, library: Library
) -> None:
    async with http_client(base_url, library.alice_token) as client:
        result = await client.call_tool(
            "search_documents", {"query": QUOKKA, "project": "research", "top_k": 2}
        )
        plain = await client.call_tool(
            "search_documents",
            {"query": QUOKKA, "project": "research", "top_k": 2, "images": "none"},
        )
    text = text_of(result)
    links = text.split("Links:\n", 1)[1]
    document = library.ids["report.pdf"]
    assert links.startswith(
        f"[1] [page 3 with the passage marked]({library.settings.public_url}"
        f"/api/documents/{document}/pages/3/image?highlight={document}%3A"
    )
    assert "#page=3)" in links.splitlines()[0]
    assert _images(plain) == []
    assert "Links:" in text_of(plain)


async def test_show_page_returns_one_page_marked(base_url: str, library: Library) -> None:
    async with http_client(base_url, library.alice_token) as client:
        found = await client.call_tool(
            "search_documents",
            {"query": QUOKKA, "project": "research", "top_k": 1, "images": "none"},
        )
        chunk_id = found.structured_content["results"][0]["chunk_id"]
        shown = await client.call_tool(
            "show_page",
            {"document": "report.pdf", "page": 3, "highlight": chunk_id, "project": "research"},
        )
        beyond = await client.call_tool(
            "show_page", {"document": "report.pdf", "page": 99, "project": "research"}
        )
        text_only = await client.call_tool("show_page", {"document": "notes.md", "page": 1})
    assert not shown.is_error, text_of(shown)
    ((label, image),) = _images(shown)
    assert label.startswith("report.pdf — p. 3 of 9, the passage marked (100% of its words")
    assert max(image.size) == MODEL_LONG_EDGE
    assert shown.structured_content["covered"] == 1.0
    assert shown.structured_content["original_url"].endswith("#page=3")
    assert beyond.is_error and "(error: page_not_found)" in text_of(beyond)
    assert text_only.is_error and "(error: no_page_image)" in text_of(text_only)
