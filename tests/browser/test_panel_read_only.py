"""A read-only token in the panel: it searches and reads, and no control offers a change the
API would refuse (token_read_only)."""

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
from tests.browser.chromium import UI_TIMEOUT_MS
from tests.browser.live_service import run_service
from tests.support.abstracts import add_ready_abstracts


@pytest.fixture
def quiet_service_url(db_url: str, tmp_path: Path) -> Iterator[str]:
    """The service without its worker: the documents here are written ready."""
    with run_service(db_url, tmp_path / "data", server={"run_worker": False}) as url:
        yield url


def read_token(db_url: str, user: users.NewUser) -> str:
    async def create() -> str:
        async with await psycopg.AsyncConnection.connect(
            db_url, autocommit=True, row_factory=dict_row
        ) as conn:
            token, _ = await users.create_token(conn, user.user.id, label="ro", scope="read")
            return token

    with ThreadPoolExecutor(max_workers=1) as pool:  # Playwright's loop runs on this thread
        return pool.submit(asyncio.run, create()).result()


def test_a_read_only_token_searches_but_is_offered_no_change(
    browser: Any, alice: users.NewUser, db_url: str, quiet_service_url: str
) -> None:
    from playwright.sync_api import expect

    add_ready_abstracts(db_url, alice.project.id, 3)
    expect.set_options(timeout=UI_TIMEOUT_MS)
    page = browser.new_context().new_page()
    page.goto(quiet_service_url)
    page.get_by_label("API token").fill(read_token(db_url, alice))
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice")
    expect(page.locator("#documents")).to_be_visible()

    expect(page.locator("#read-only-note")).to_be_visible()
    expect(page.get_by_role("heading", name="Upload")).to_be_hidden()
    expect(page.locator("#new-project-form")).to_be_hidden()
    expect(page.get_by_role("button", name="Delete", exact=False)).to_have_count(0)
    expect(page.get_by_role("button", name="Re-extract", exact=False)).to_have_count(0)

    page.get_by_label("Search this project").fill("cells")
    page.get_by_role("button", name="Search", exact=True).click()
    expect(page.locator("#search-results li").first).to_be_visible()
