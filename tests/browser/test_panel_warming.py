"""The panel says when results may improve because the local reranker is still warming."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from service.services import users
from tests.browser.chromium import UI_TIMEOUT_MS
from tests.browser.live_service import run_service
from tests.support.abstracts import add_ready_abstracts


@pytest.fixture
def cold_service_url(db_url: str, tmp_path: Path) -> Iterator[str]:
    """The service with the local reranker and no embedding budget: a cold search scores nothing."""
    with run_service(
        db_url,
        tmp_path / "data",
        server={"run_worker": False},
        search={"reranker": "local", "local_embed_budget": 0.0},
    ) as url:
        yield url


def test_a_search_of_a_cold_project_says_results_may_improve(
    browser: Any, alice: users.NewUser, db_url: str, cold_service_url: str
) -> None:
    from playwright.sync_api import expect

    add_ready_abstracts(db_url, alice.project.id, 8)
    expect.set_options(timeout=UI_TIMEOUT_MS)
    page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    page.goto(cold_service_url)
    page.get_by_label("API token").fill(alice.token)
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice")
    # The project is chosen once its document list has loaded; a search before that has none.
    expect(page.locator("#documents")).to_be_visible()

    page.get_by_label("Search this project").fill("cancer cells")
    with page.expect_response(re.compile(r"/search$")) as searched:
        page.get_by_role("button", name="Search", exact=True).click()
    answer = searched.value.json()

    assert answer["results"], answer
    assert answer["unscored"] == answer["candidates"] > 0
    badge = page.locator(".still-warming")
    expect(badge).to_be_visible()
    expect(badge).to_contain_text("Still warming: results may improve")
    expect(page.locator(".not-reranked")).to_have_count(0)
