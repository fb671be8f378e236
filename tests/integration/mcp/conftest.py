"""One library of documents for all MCP tests, served for real over HTTP and stdio.

Extraction takes seconds per document, so the documents are ingested once per
session (through the same service as ``shortlist ingest``: the real extractor,
the real blob store, the real database) into a database of their own:

- alice, project "research": ``report.pdf`` (24 pages; "quokka migration ledger"
  only on page 3) and ``broken.pdf`` (not a PDF: extraction fails);
- alice, project "default": ``notes.md`` (mentions a lighthouse);
- bob, project "default": ``bob-private.md`` (also about the quokka migration ledger,
  plus a word only bob has: "zanzibarite").
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pymupdf
import pytest
import uvicorn
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from service.app import create_app
from service.runtime import open_runtime
from service.services import projects, users
from service.services.ingest import ingest_file
from service.services.url_fetch import Resolver, system_resolver
from service.settings import Settings
from service.storage.db import connection
from tests.conftest import create_database, drop_database, make_settings
from tests.support.paths import REPO_DIR

QUOKKA = "quokka migration ledger"
BOB_ONLY = "zanzibarite"

PAGE_TOPICS = [
    ("harbour", "tides", "pilots", "moorings", "ferries"),
    ("orchard", "irrigation", "pruning", "cider", "blossom"),
    ("wildlife", "survey", "burrows", "rangers", "island"),
    ("glacier", "moraine", "crevasse", "ice cores", "meltwater"),
]
FILLER_TOPIC = ("archive", "ledgers", "clerks", "shelves", "catalogue")
#: Pages in report.pdf: four short topical pages, then long ones, so reading it whole is cut.
REPORT_PAGES = len(PAGE_TOPICS) + 5


def page_text(number: int, topic: tuple[str, ...], extra: str = "", repeat: int = 3) -> str:
    """About 300 characters per ``repeat`` on one topic (900 by default: one page, one chunk)."""
    a, b, c, d, e = topic
    sentences = [
        f"Page {number} of the field report concerns the {a} and its {b}.",
        f"The {c} recorded every change in the {d} during the season.",
        f"Our notes on the {e} were compared with the records kept by the {c}.",
        f"Each entry about the {a} lists the date, the {b} and the state of the {d}.",
    ]
    body = " ".join(sentences * repeat)
    return f"{extra} {body}".strip()


def report_pages() -> list[str]:
    """Pages 1-4 of about 900 characters (a page fits in a chunk, two do not), then 5 of 4,000."""
    pages = []
    for number, topic in enumerate(PAGE_TOPICS, start=1):
        extra = (
            f"The {QUOKKA} is kept by the rangers on the island and counts every burrow."
            if number == 3
            else ""
        )
        pages.append(page_text(number, topic, extra))
    for number in range(len(PAGE_TOPICS) + 1, REPORT_PAGES + 1):
        pages.append(page_text(number, FILLER_TOPIC, repeat=13))
    return pages


def make_pdf(pages: list[str]) -> bytes:
    """A real PDF, one text box per page, in a font small enough for 4,000 characters."""
    doc = pymupdf.open()
    for text in pages:
        page = doc.new_page()
        left = page.insert_textbox(pymupdf.Rect(50, 50, 562, 792), text, fontsize=9)
        assert left >= 0, "the text does not fit on the page"
    data: bytes = doc.tobytes()
    doc.close()
    return data


class Library(NamedTuple):
    settings: Settings
    db_url: str
    data_dir: Path
    alice_token: str
    bob_token: str
    ids: dict[str, str]
    """Document and project ids by name: "report.pdf", "research", "bob-default"…"""


async def _ingest(settings: Settings, source_dir: Path) -> tuple[str, str, dict[str, str]]:
    ids: dict[str, str] = {}
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            alice = await users.create_user(conn, "alice")
            bob = await users.create_user(conn, "bob")
            research = await projects.create_project(conn, alice.user.id, "research")
        ids["research"] = str(research.id)
        ids["alice-default"] = str(alice.project.id)
        ids["bob-default"] = str(bob.project.id)
        files = {
            "report.pdf": (research, make_pdf(report_pages())),
            "broken.pdf": (research, b"%PDF-1.7\nthis is not really a PDF at all\n"),
            "notes.md": (
                alice.project,
                b"# Notes\n\nThe lighthouse keeper logs the fog signal every night.\n",
            ),
            "bob-private.md": (
                bob.project,
                f"# Bob\n\nBob's copy of the {QUOKKA} and the {BOB_ONLY} samples.\n".encode(),
            ),
        }
        for name, (project, data) in files.items():
            path = source_dir / name
            path.write_bytes(data)
            ingested = await ingest_file(runtime, project, path)
            assert ingested.document is not None, ingested.error
            ids[name] = str(ingested.document.id)
    return alice.token, bob.token, ids


@pytest.fixture(scope="session")
def library(
    server_url: str, template_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Library]:
    name = f"shortlist_test_mcp_{uuid.uuid4().hex[:12]}"
    db_url = create_database(server_url, name, template=template_database)
    data_dir = tmp_path_factory.mktemp("mcp-data")
    settings = make_settings(db_url, data_dir, server={"run_worker": False})
    try:
        alice, bob, ids = asyncio.run(_ingest(settings, tmp_path_factory.mktemp("mcp-files")))
        yield Library(settings, db_url, data_dir, alice, bob, ids)
    finally:
        drop_database(server_url, name)


@contextmanager
def live_app(settings: Settings, resolve: Resolver = system_resolver) -> Iterator[str]:
    """The whole app (lifespan included) under uvicorn on 127.0.0.1:<free port>; URL imports
    look host names up with ``resolve``."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    app = create_app(settings, resolve=resolve)
    config = uvicorn.Config(app, log_level="warning", ws="none", http="h11")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("uvicorn did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


@pytest.fixture(scope="session")
def base_url(library: Library) -> Iterator[str]:
    with live_app(library.settings) as url:
        yield url


@asynccontextmanager
async def http_client(base_url: str, token: str) -> AsyncIterator[Client]:
    """The SDK's own client over Streamable HTTP, presenting ``token``."""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http, Client(streamable_http_client(f"{base_url}/mcp", http_client=http)) as client:
        yield client


def stdio_parameters(
    library: Library, *args: str, token: str | None = None
) -> StdioServerParameters:
    """``python -m service.cli mcp ARGS`` against the module's database."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": os.environ.get("HOME", str(library.data_dir)),
        "DATABASE_URL": library.db_url,
        "SHORTLIST_DATA_DIR": str(library.data_dir),
        "SHORTLIST_SEARCH__RERANKER": "none",
    }
    if token is not None:
        env["SHORTLIST_TOKEN"] = token
    return StdioServerParameters(
        command=sys.executable, args=["-m", "service.cli", "mcp", *args], env=env, cwd=REPO_DIR
    )


def text_of(result: Any) -> str:
    """The text blocks of a tool result, joined."""
    return "\n".join(block.text for block in result.content if block.type == "text")
