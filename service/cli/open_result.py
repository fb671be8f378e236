"""``shortlist search --open N``: result N shown in the user's own viewer.

A result whose document has page images opens as its page with the passage marked (a PNG
written to a temporary file, since the viewer has no token to fetch it with); any other
opens the original at its page (``#page=N``, a short-lived link). The viewer is the one
Python's :mod:`webbrowser` picks, so ``BROWSER`` chooses it (``BROWSER="feh %s"``).
"""

from __future__ import annotations

import os
import tempfile
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qs, urlsplit
from uuid import UUID

import click

from service.errors import InvalidRequest

if TYPE_CHECKING:
    from service.cli.client import ShortlistClient
    from service.records import Principal
    from service.runtime import Runtime
    from service.shapes import SearchHit, SearchResponse


def chosen(answer: SearchResponse, number: int) -> SearchHit:
    """Result ``number`` (1-based, as the CLI numbers them)."""
    if not 1 <= number <= len(answer.results):
        raise InvalidRequest(
            f"--open {number}: the search has {len(answer.results)} result(s).", field="open"
        )
    return answer.results[number - 1]


def _save(hit: SearchHit, png: bytes) -> Path:
    descriptor, name = tempfile.mkstemp(
        prefix=f"shortlist-{hit.document.id}-p{hit.pages[0]}-", suffix=".png"
    )
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(png)
    return Path(name)


def show(target: str) -> None:
    """Hand ``target`` (a file or a link) to the user's viewer, and say what was opened."""
    click.echo(f"opening {target}", err=True)
    webbrowser.open(target)


def original_at_page(url: str, hit: SearchHit) -> str:
    return f"{url}#page={hit.pages[0]}"


def open_remote(client: ShortlistClient, hit: SearchHit) -> None:
    """Through the running service, with the client's token."""
    if hit.page_image_url is not None:
        link = urlsplit(hit.page_image_url)
        show(_save(hit, client.page_image(f"{link.path}?{link.query}")).as_uri())
        return
    show(original_at_page(client.file_link(str(hit.document.id)), hit))


async def open_local(runtime: Runtime, principal: Principal, hit: SearchHit) -> None:
    """In this process, on the database and blob store directly."""
    from service.services import documents, page_images
    from service.storage.db import connection

    if hit.page_image_url is not None:
        passage = parse_qs(urlsplit(hit.page_image_url).query)["highlight"][0]
        drawn = await page_images.page_image(
            runtime, principal, hit.document.id, hit.pages[0], passage=passage
        )
        show(_save(hit, drawn.png).as_uri())
        return
    async with connection(runtime.pool) as conn:
        url = await documents.download_url(runtime, conn, principal, UUID(str(hit.document.id)))
    show(original_at_page(url, hit))
