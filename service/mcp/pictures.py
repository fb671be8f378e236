"""What the model sees of a page: image content blocks, and the links it can quote.

``search_documents`` returns, after its text, the pictures its ``images`` argument asks for,
each image block preceded by a text block naming its result (``[2] report.pdf — p. 3``);
``show_page`` returns one page. A picture for a model is at most :data:`MODEL_LONG_EDGE`
pixels on its longest side (images are billed by area, about width x height / 750 tokens),
and one answer holds at most :data:`MAX_PICTURES` of them and :data:`MAX_PICTURE_BYTES` in
all. Every result of a document with pages also gets Markdown links to its page image and to
the original at ``#page=N``, since a model quotes the links it can see.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Literal, NamedTuple
from uuid import UUID

from mcp_types import ContentBlock, ImageContent, TextContent

from service.errors import ShortlistError
from service.mcp.caller import Caller
from service.mcp.render import page_span
from service.services import documents as documents_service
from service.services import page_images
from service.services.search import ProjectSearch
from service.storage.db import connection

ImageMode = Literal["none", "figures", "passages"]
"""``none``: no pictures; ``figures``: the figures results are or sit beside; ``passages``:
each result's passage cropped from its page, marked."""

MODEL_LONG_EDGE = 1024
"""Longest side, in pixels, of a picture sent to a model."""
MAX_PICTURES = 4
"""Most pictures in one tool answer."""
MAX_PICTURE_BYTES = 3 * 1024 * 1024
"""Most bytes of pictures (PNG, before base64) in one tool answer."""

Block = ContentBlock
"""One block of a tool answer (text or image, here)."""


class Picture(NamedTuple):
    """One picture to show, and the text block that names it."""

    label: str
    png: bytes


def picture_blocks(pictures: Sequence[Picture], notes: Sequence[str] = ()) -> list[Block]:
    """Each picture as a text block naming it, then its image block, within the bounds; a
    note says how many were left out."""
    blocks: list[Block] = [TextContent(type="text", text=note) for note in notes]
    shown = spent = 0
    for picture in pictures:
        if shown == MAX_PICTURES or spent + len(picture.png) > MAX_PICTURE_BYTES:
            break
        blocks.append(TextContent(type="text", text=picture.label))
        blocks.append(
            ImageContent(
                type="image", data=base64.b64encode(picture.png).decode(), mime_type="image/png"
            )
        )
        shown += 1
        spent += len(picture.png)
    if left := len(pictures) - shown:
        blocks.append(
            TextContent(
                type="text",
                text=f"{left} more picture(s) left out (at most {MAX_PICTURES} per answer); "
                "call show_page for a page you need to see.",
            )
        )
    return blocks


def _result_label(number: int, name: str, pages: Sequence[int], what: str) -> str:
    return f"[{number}] {name} — {page_span(pages)}: {what}"


async def passage_pictures(caller: Caller, found: ProjectSearch) -> tuple[list[Picture], list[str]]:
    """Each result's passage cropped from its first page, marked, in result order (only as
    many as an answer holds are drawn); notes for those that could not be drawn."""
    pictures: list[Picture] = []
    notes: list[str] = []
    for number, hit in enumerate(found.result.hits, start=1):
        if len(pictures) == MAX_PICTURES:
            break
        if hit.document_id not in found.pictured:
            continue
        try:
            drawn = await page_images.page_image(
                caller.runtime,
                caller.principal,
                UUID(hit.document_id),
                hit.pages[0],
                passage=hit.chunk_id,
                crop=True,
                max_side=MODEL_LONG_EDGE,
            )
        except ShortlistError as error:
            notes.append(f"[{number}] has no picture: {error.message} (error: {error.code})")
            continue
        what = "the passage on its page, marked" if drawn.cropped else "its page"
        pictures.append(
            Picture(_result_label(number, hit.document_name, hit.pages, what), drawn.png)
        )
    return pictures, notes


async def figure_pictures(caller: Caller, found: ProjectSearch) -> tuple[list[Picture], list[str]]:
    """The figure each result is or sits beside, each once, in result order, cropped from its
    page (its caption included); notes for those that could not be drawn."""
    pictures: list[Picture] = []
    notes: list[str] = []
    shown: set[tuple[str, int]] = set()
    for number, hit in enumerate(found.result.hits, start=1):
        numbered = found.figures.get(hit.chunk_id)
        if numbered is None or (hit.document_id, numbered.number) in shown:
            continue
        if len(pictures) == MAX_PICTURES:
            break
        shown.add((hit.document_id, numbered.number))
        figure = numbered.figure
        try:
            drawn = await page_images.page_image(
                caller.runtime,
                caller.principal,
                UUID(hit.document_id),
                figure.page,
                figure=numbered.number,
                max_side=MODEL_LONG_EDGE,
            )
        except ShortlistError as error:
            notes.append(f"[{number}] has no picture: {error.message} (error: {error.code})")
            continue
        what = figure.caption or f"figure {numbered.number} of the document (no caption)"
        pictures.append(
            Picture(_result_label(number, hit.document_name, (figure.page,), what), drawn.png)
        )
    return pictures, notes


async def result_links(caller: Caller, found: ProjectSearch) -> str | None:
    """``Links:`` then one line per result of a document with pages: its page image and the
    original at that page, as Markdown links; None when no result has pages."""
    lines: list[str] = []
    originals: dict[str, str | None] = {}
    async with connection(caller.runtime.pool) as conn:
        for number, hit in enumerate(found.result.hits, start=1):
            if hit.document_id not in found.pictured:
                continue
            if hit.document_id not in originals:
                try:
                    originals[hit.document_id] = await documents_service.download_url(
                        caller.runtime, conn, caller.principal, UUID(hit.document_id)
                    )
                except ShortlistError:
                    originals[hit.document_id] = None
            page = hit.pages[0]
            image = found.base_url + page_images.page_image_path(
                hit.document_id, page, passage=hit.chunk_id
            )
            line = f"[{number}] [page {page} with the passage marked]({image})"
            if (original := originals[hit.document_id]) is not None:
                line += f" · [the original at p. {page}]({original}#page={page})"
            lines.append(line)
    return "Links:\n" + "\n".join(lines) if lines else None
