"""A file dropped on the panel before any project is chosen is not lost silently: the
page says what to do, and nothing is sent."""

from __future__ import annotations

from typing import Any

import pytest

from service.services import users
from tests.browser.chromium import new_page

pytestmark = pytest.mark.browser


def test_a_file_picked_with_no_project_chosen_says_so_and_sends_nothing(
    browser: Any, service_url: str, alice: users.NewUser
) -> None:
    from playwright.sync_api import expect

    page = new_page(browser)
    # The project list has not come (or is empty): no project is chosen.
    page.route(
        "**/api/projects",
        lambda route: (
            route.fulfill(json={"projects": []})
            if route.request.method == "GET"
            else route.continue_()
        ),
    )
    grants: list[str] = []
    page.on("request", lambda r: grants.append(r.url) if r.url.endswith("/api/uploads") else None)
    page.goto(service_url)
    page.get_by_label("API token").fill(alice.token)
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice")

    page.locator("#file-input").set_input_files(
        {"name": "notes.md", "mimeType": "text/markdown", "buffer": b"# Notes\n"}
    )

    item = page.locator('.upload-item[data-file-name="notes.md"]')
    expect(item).to_have_attribute("data-state", "error")
    expect(item.locator(".upload-status")).to_have_text(
        "Not uploaded: choose or create a project first."
    )
    assert grants == []
    page.context.close()
