"""A project created while the panel's project list is still on its way stays in the
picker and stays chosen: the list, read before the project existed, does not undo it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from service.services import users
from tests.browser.chromium import UI_TIMEOUT_MS, new_page

pytestmark = pytest.mark.browser

PROJECT = "Glacier surveys"


def test_a_project_created_before_the_list_arrives_stays_chosen(
    browser: Any, service_url: str, alice: users.NewUser
) -> None:
    from playwright.sync_api import expect

    page = new_page(browser)
    held: list[Any] = []
    page.route(
        "**/api/projects",
        lambda route: held.append(route) if route.request.method == "GET" else route.continue_(),
    )
    page.goto(service_url)
    page.get_by_label("API token").fill(alice.token)
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice")
    for _ in range(UI_TIMEOUT_MS // 50):  # the held request reaches the route
        if held:
            break
        page.wait_for_timeout(50)
    assert len(held) == 1
    # Another tab makes a project, so the list the page gets is one it has not seen yet.
    other_tab = httpx.post(
        f"{service_url}/api/projects",
        json={"name": "Fieldwork archive"},
        headers={"Authorization": f"Bearer {alice.token}"},
        timeout=30,
    )
    assert other_tab.status_code == 201
    stale = held[0].fetch()  # the list as it is before the panel's project exists
    assert [p["name"] for p in stale.json()["projects"]] == ["default", "Fieldwork archive"]

    with page.expect_response(
        lambda r: r.url.endswith("/api/projects") and r.request.method == "POST"
    ) as created:
        page.get_by_label("New project").fill(PROJECT)
        page.get_by_role("button", name="Create").click()
    assert created.value.status == 201
    expect(page.locator("#project-select option:checked")).to_have_text(PROJECT)

    held[0].fulfill(response=stale)

    picker = page.locator("#project-select")
    # The list has been taken in (the other tab's project is there), and the choice held.
    expect(picker.locator("option")).to_have_text(["default", "Fieldwork archive", PROJECT])
    expect(picker.locator("option:checked")).to_have_text(PROJECT)
    assert "project=" + created.value.json()["id"] in page.url
    page.context.close()
