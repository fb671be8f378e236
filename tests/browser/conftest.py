"""Fixtures of the panel's tests: a user with a token, straight from the service layer,
and headless Chromium."""

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
from tests.browser.chromium import CHROMIUM, CHROMIUM_ARGS
from tests.browser.live_service import run_service


async def create_user(db_url: str, name: str) -> users.NewUser:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        return await users.create_user(conn, name)


def create_user_beside_playwright(db_url: str, name: str) -> users.NewUser:
    """:func:`create_user` from a test using Playwright's sync API, which keeps an event
    loop running on the test's thread: the user is made on another one."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, create_user(db_url, name)).result()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Chromium for a module's tests; skips them when it is not installed."""
    if not CHROMIUM.exists():
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def alice(db_url: str) -> users.NewUser:
    """A user with a token and a project; safe beside Playwright's sync API and in async tests."""
    return create_user_beside_playwright(db_url, "alice")


@pytest.fixture
def service_url(db_url: str, tmp_path: Path) -> Iterator[str]:
    """The whole service, worker included, on a loopback port."""
    with run_service(db_url, tmp_path / "data") as url:
        yield url
