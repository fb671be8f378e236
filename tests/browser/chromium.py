"""Debian's Chromium, headless, as the browser tests drive it through Playwright."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
UI_TIMEOUT_MS = 20_000
"""CI machines are busy; nothing waits idly for this long."""


def new_page(browser: Any, **context_options: Any) -> Any:
    """A page in a fresh context of ``browser``, every wait (Playwright's and ``expect``'s)
    bounded by :data:`UI_TIMEOUT_MS`; closing its ``context`` closes it."""
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)
    context = browser.new_context(**context_options)
    context.set_default_timeout(UI_TIMEOUT_MS)
    return context.new_page()
