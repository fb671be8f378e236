"""Passages read as text, safely: Markdown rendered (tables as tables), uploaded HTML inert,
the sentence that answers marked; a document's text page by page; search first on a phone."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.cli.client import ShortlistClient
from service.services import users
from tests.browser.chromium import UI_TIMEOUT_MS
from tests.support.web_server import WebServer

pytestmark = pytest.mark.browser


@pytest.fixture
def tripwire() -> Iterator[WebServer]:
    """A loopback server that records every request: nothing may reach it."""
    wire = WebServer({})
    try:
        yield wire
    finally:
        wire.close()


def boiling_points(tripwire_url: str) -> str:
    return f"""# Boiling points of solvents

The **boiling point** of each solvent was measured at 101.3 kPa, with an error of 10<sup>−2</sup> K.

| Solvent | Boiling point °C |
|---|---|
| water | 100.0 |
| ethanol | 78.4 |

<script>window.__ran = "script"</script>
<img src="{tripwire_url}/img.png" onerror="window.__ran = 'onerror'">
<a href="javascript:window.__ran='link'">a link</a>
<iframe src="{tripwire_url}/frame"></iframe>
"""


@pytest.fixture
def project_with_passages(
    service_url: str, alice: users.NewUser, tripwire: WebServer, tmp_path: Path
) -> str:
    """Alice's project holds a Markdown note with a table and some hostile HTML, ready."""
    note = tmp_path / "solvents.md"
    note.write_text(boiling_points(tripwire.url))
    client = ShortlistClient(service_url, alice.token)
    try:
        document = client.upload(str(alice.project.id), note)
        assert client.wait(document["id"], timeout=120)["status"] == "ready"
    finally:
        client.close()
    return str(alice.project.id)


def signed_in(browser: Any, service_url: str, token: str, **context_options: Any) -> Any:
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)
    context = browser.new_context(**context_options)
    context.set_default_timeout(UI_TIMEOUT_MS)
    page = context.new_page()
    page.goto(service_url)
    page.get_by_label("API token").fill(token)
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice")
    return page


def test_a_table_passage_renders_as_a_table_and_its_html_stays_inert(
    browser: Any,
    service_url: str,
    alice: users.NewUser,
    tripwire: WebServer,
    project_with_passages: str,
) -> None:
    from playwright.sync_api import expect

    page = signed_in(browser, service_url, alice.token)
    # The project is chosen once its documents are listed; a search before that has no project.
    expect(page.locator("#documents-body tr", has_text="solvents.md")).to_be_visible()
    page.get_by_label("Search this project").fill("what is the boiling point of the ethanol")
    page.get_by_label("Search this project").press("Enter")
    passage = page.locator("#search-results .passage").first
    expect(passage.locator("table")).to_have_count(1)
    expect(passage.locator("table th").first).to_have_text("Solvent")
    expect(passage.locator("table td", has_text="78.4")).to_have_count(1)
    expect(passage.locator("strong").first).to_contain_text("boiling point")
    expect(passage.locator("sup")).to_have_text("−2")
    # Nothing of the uploaded HTML exists as an element, ran, or fetched anything.
    for tag in ("script", "img", "iframe", "a"):
        expect(passage.locator(tag)).to_have_count(0)
    page.wait_for_timeout(300)
    assert page.evaluate("window.__ran") is None
    assert tripwire.requests == []
    # The sentence that answers is marked (in the passage, or quoted above it when the rendering
    # splits it, as a table row is), never the query's words one by one.
    result = page.locator("#search-results .result").first
    expect(result.locator("mark.answer").first).to_be_visible()
    answers = " ".join(result.locator("mark.answer").all_inner_texts()).casefold()
    assert "ethanol" in answers or "boiling point" in answers, answers
    expect(result.locator("mark:not(.answer)")).to_have_count(0)
    page.context.close()


def test_the_document_view_shows_the_extracted_text_of_a_page(
    browser: Any, service_url: str, alice: users.NewUser, project_with_passages: str
) -> None:
    from playwright.sync_api import expect

    page = signed_in(browser, service_url, alice.token)
    page.get_by_role("button", name="View the text of solvents.md").click()
    dialog = page.locator("#document-view")
    expect(dialog).to_be_visible()
    expect(dialog.locator("#document-view-title")).to_have_text("solvents.md")
    expect(dialog.locator(".document-view-text h1")).to_have_text("Boiling points of solvents")
    expect(dialog.locator(".document-view-text table")).to_have_count(1)
    expect(dialog.locator("#document-view-page")).to_have_value("1")
    expect(dialog.locator(".document-view-page-count")).to_have_text("1")
    expect(dialog.get_by_role("button", name="Next page")).to_be_disabled()
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()
    page.context.close()


def test_on_a_phone_the_search_comes_first(
    browser: Any, service_url: str, alice: users.NewUser
) -> None:
    page = signed_in(browser, service_url, alice.token, viewport={"width": 360, "height": 740})
    search = page.locator("#search-card").bounding_box()
    project = page.locator("section[aria-labelledby=project-heading]").bounding_box()
    assert search is not None and project is not None
    assert search["y"] < project["y"]
    assert search["y"] < 740  # above the fold
    # A write token's panel does not say it is read-only (the header would wrap on a phone).
    assert not page.locator("#read-only-note").is_visible()
    page.context.close()
