"""Stored XSS through originals (issue #13, item 1), in Chromium against the real service.

Mallory uploads an HTML page, an SVG drawing (as ``drawing.txt``, declared
``image/svg+xml``) and an HTML page declared ``text/html`` for a Markdown name; each
one's script would read ``/api/session`` (with its CSRF token) and list projects, and
its images, stylesheet and frame point at a local "remote" server. Alice, signed in to
the panel, opens mallory's links: no script runs, no request reaches ``/api/*`` from
the original, and the remote server hears nothing; a PDF still opens in Chromium's
viewer (inline, sandboxed, no download). A control page served by that same
remote server shows the probes would have caught it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from service.services import users
from tests.browser.chromium import UI_TIMEOUT_MS
from tests.browser.conftest import create_user_beside_playwright
from tests.integration.documents.conftest import make_pdf
from tests.support.originals import (
    MARKER,
    hostile_html,
    hostile_svg,
    original_link,
    upload_document,
    wait_settled,
)
from tests.support.web_server import Reply, WebServer

pytestmark = pytest.mark.browser


@pytest.fixture
def remote() -> Iterator[WebServer]:
    """A loopback server standing in for the internet, recording every request; it serves
    only the control page (everything else is 404, and recorded all the same)."""
    server = WebServer({})
    server.routes["/control.html"] = Reply(
        200, {"Content-Type": "text/html"}, hostile_html(server.url)
    )
    try:
        yield server
    finally:
        server.close()


def _paths(server: WebServer) -> list[str]:
    return [path for path, _host in server.requests]


def mallorys_links(db_url: str, service_url: str, remote: str) -> dict[str, str]:
    """Mallory's three hostile originals and a PDF, extracted; name -> the link the
    service hands out."""
    mallory = create_user_beside_playwright(db_url, "mallory")
    files = [
        ("notes.html", hostile_html(remote), "text/html"),
        ("drawing.txt", hostile_svg(remote), "image/svg+xml"),
        ("page.md", hostile_html(remote), "text/html"),
        ("survey.pdf", make_pdf(["The estuary survey took nine days."]), "application/pdf"),
    ]
    links: dict[str, str] = {}
    with httpx.Client(
        base_url=service_url, headers={"Authorization": f"Bearer {mallory.token}"}, timeout=30
    ) as client:
        for name, data, declared in files:
            created = upload_document(client, str(mallory.project.id), name, data, declared)
            assert wait_settled(client, created["id"])["status"] == "ready"
            links[name] = original_link(client, created["id"])
    return links


def test_opening_another_users_html_or_svg_original_runs_nothing_and_fetches_nothing(
    browser: Any,
    service_url: str,
    db_url: str,
    alice: users.NewUser,
    remote: WebServer,
) -> None:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect

    links = mallorys_links(db_url, service_url, remote.url)
    pdf_link = links.pop("survey.pdf")
    context = browser.new_context(accept_downloads=True)
    context.set_default_timeout(UI_TIMEOUT_MS)
    page = context.new_page()
    page.goto(service_url)
    page.get_by_label("API token").fill(alice.token)
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice", timeout=UI_TIMEOUT_MS)

    opened: dict[str, str] = {}
    for name, link in links.items():
        victim = context.new_page()
        requests: list[str] = []
        victim.on("request", lambda request, seen=requests: seen.append(request.url))
        with victim.expect_download() as download:
            try:
                victim.goto(link)
            except PlaywrightError as exc:  # a download is not a page: goto reports it
                assert "Download is starting" in str(exc) or "ERR_ABORTED" in str(exc), exc
        opened[name] = download.value.suggested_filename
        download.value.cancel()
        victim.wait_for_timeout(500)  # time for a script, had one run, to reach out
        assert MARKER not in victim.title()
        assert requests == [link], name
        victim.close()

    assert opened == {name: name for name in links}
    assert _paths(remote) == []

    # A PDF still opens in the browser's viewer, at its page, sandboxed.
    viewer = context.new_page()
    downloads: list[Any] = []
    viewer.on("download", lambda download: downloads.append(download))
    response = viewer.goto(f"{pdf_link}#page=1")
    assert response is not None
    headers = response.all_headers()
    assert headers["content-type"] == "application/pdf"
    assert headers["content-security-policy"] == "sandbox"
    assert headers["content-disposition"].startswith("inline;")
    viewer.wait_for_timeout(500)
    assert downloads == []
    assert viewer.url.endswith("#page=1")
    viewer.close()
    # Alice's own session is untouched and still hers.
    expect(page.locator("#user-name")).to_have_text("alice")

    # Control: the same page served by another origin as a page does run and fetch, so
    # the probes above would have seen it.
    control = context.new_page()
    control.goto(f"{remote.url}/control.html")
    expect(control).to_have_title(MARKER, timeout=UI_TIMEOUT_MS)
    control.wait_for_function(
        "() => performance.getEntriesByType('resource').length >= 3", timeout=UI_TIMEOUT_MS
    )
    assert any(path.startswith("/pixel.png") for path in _paths(remote))
    context.close()
