"""Requested documents in the panel: what an assistant asked for is listed with its address,
and approving it imports the address into the project's documents."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from service.services import users
from service.storage.db import fetch_one
from tests.browser.live_service import run_service
from tests.browser.test_panel_import import open_panel
from tests.support.web_server import Reply, WebServer

pytestmark = pytest.mark.browser

NOTE = b"# Tide tables\n\nHigh water at the pier was at noon.\n"


@pytest.fixture
def site() -> Iterator[WebServer]:
    server = WebServer({"/tide-tables.md": Reply(200, {"Content-Type": "text/markdown"}, NOTE)})
    try:
        yield server
    finally:
        server.close()


async def _log_request(db_url: str, project_id: Any, title: str, url: str | None) -> None:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        row = await fetch_one(
            conn,
            "insert_document_request",
            project_id=project_id,
            title=title,
            source_url=url,
            reason="The user asked about the pier.",
            max_pending=10,
        )
        assert row is not None


def log_request(db_url: str, project_id: Any, title: str, url: str | None = None) -> None:
    """Log a request from another thread (Playwright's sync API holds this one's loop)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, _log_request(db_url, project_id, title, url)).result()


def test_a_requested_document_is_approved_with_an_address_and_imported(
    browser: Any, db_url: str, tmp_path: Path, alice: users.NewUser, site: WebServer
) -> None:
    from playwright.sync_api import expect

    log_request(db_url, alice.project.id, "Tide tables", f"{site.url}/tide-tables.md")
    log_request(db_url, alice.project.id, "Harbour charter")
    fetch = {"allow_http": True, "allow_private_networks": True}
    with run_service(db_url, tmp_path / "data", fetch=fetch) as base_url:
        page = open_panel(browser, base_url, alice.token)
        expect(page.locator("#requests-card")).to_be_visible()
        charter = page.get_by_label("Address for Harbour charter")
        expect(charter).to_have_value("")
        charter.fill("http://169.254.169.254/latest/meta-data/")
        page.locator("li.request", has_text="Harbour charter").get_by_role(
            "button", name="Approve"
        ).click()
        expect(
            page.locator("li.request", has_text="Harbour charter").locator(".error")
        ).to_contain_text("169.254.169.254")
        tides = page.get_by_label("Address for Tide tables")
        expect(tides).to_have_value(f"{site.url}/tide-tables.md")
        page.locator("li.request", has_text="Tide tables").get_by_role(
            "button", name="Approve"
        ).click()
        row = page.locator("#documents-body tr", has_text="tide-tables.md")
        expect(row.locator(".badge.ready")).to_have_text("Ready")
        expect(page.locator("li.request", has_text="Tide tables")).to_contain_text("Approved")
        page.context.close()
