"""Importing from a web address in the panel: a refused address says why at once; an allowed
one becomes a document like an upload."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.services import users
from tests.browser.chromium import UI_TIMEOUT_MS
from tests.browser.live_service import run_service
from tests.support.web_server import Reply, WebServer

pytestmark = pytest.mark.browser

NOTE = b"# Field notes\n\nThe moraine was surveyed in June.\n"


@pytest.fixture
def site() -> Iterator[WebServer]:
    server = WebServer({"/field-notes.md": Reply(200, {"Content-Type": "text/markdown"}, NOTE)})
    try:
        yield server
    finally:
        server.close()


def open_panel(browser: Any, base_url: str, token: str) -> Any:
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)
    context = browser.new_context()
    context.set_default_timeout(UI_TIMEOUT_MS)
    page = context.new_page()
    page.goto(base_url)
    page.get_by_label("API token").fill(token)
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice")
    # The project is chosen once its (empty) document list has loaded.
    expect(page.locator("#documents-empty")).to_be_visible()
    return page


def test_a_local_address_is_refused_with_its_reason_and_nothing_is_fetched(
    browser: Any, service_url: str, alice: users.NewUser, site: WebServer
) -> None:
    from playwright.sync_api import expect

    page = open_panel(browser, service_url, alice.token)
    page.get_by_label("Or import from a web address").fill(f"{site.url}/field-notes.md")
    page.get_by_role("button", name="Import").click()
    expect(page.locator("#import-error")).to_contain_text("Only https://")
    expect(page.locator("#documents-empty")).to_be_visible()
    assert site.connections == 0
    page.context.close()


def test_an_allowed_address_becomes_a_ready_document(
    browser: Any, db_url: str, tmp_path: Path, alice: users.NewUser, site: WebServer
) -> None:
    from playwright.sync_api import expect

    fetch = {"allow_http": True, "allow_private_networks": True}
    with run_service(db_url, tmp_path / "data", fetch=fetch) as base_url:
        page = open_panel(browser, base_url, alice.token)
        page.get_by_label("Or import from a web address").fill(f"{site.url}/field-notes.md")
        page.get_by_role("button", name="Import").click()
        row = page.locator("#documents-body tr", has_text="field-notes.md")
        expect(row.locator(".badge.ready")).to_have_text("Ready")
        expect(page.get_by_label("Or import from a web address")).to_have_value("")
        page.context.close()
