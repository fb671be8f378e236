"""The panel in headless Chromium uploads a large file in parts straight to a real S3
server (SeaweedFS): a part the store fails for a passing reason is sent again on its own,
progress over all parts reaches the end and the joined document is searchable; a part the
store refuses for good fails the upload, cancels the parts under way and starts no other."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from service.services import users
from tests.browser.chromium import UI_TIMEOUT_MS
from tests.integration.documents.conftest import padded_pdf
from tests.integration.documents.test_multipart_uploads import PART, service_behind_faults
from tests.support.fault_proxy import Seen
from tests.support.seaweed import SeaweedS3, run_seaweed_s3

pytestmark = pytest.mark.browser

MB = 1024 * 1024
PROJECT = "Glacier surveys"
EXTRACTION_TIMEOUT_MS = 120_000
"""The padded PDF carries ~12 MB of attachment for the extractor to read past."""
PROGRESS_PROBE = """
(() => {
  const value = Object.getOwnPropertyDescriptor(HTMLProgressElement.prototype, "value");
  window.progressSteps = [];
  Object.defineProperty(HTMLProgressElement.prototype, "value", {
    ...value,
    set(fraction) {
      value.set.call(this, fraction);
      window.progressSteps.push([this.getAttribute("aria-label"), this.value]);
    },
  });
})();
"""
"""Records, in order, every value the page gives an upload's progress bar."""


def part_number(url: str) -> int | None:
    found = re.search(r"[?&]partNumber=(\d+)&", url)
    return int(found.group(1)) if found else None


def first_try_of_part_2(seen: Seen) -> bool:
    return seen.method == "PUT" and "partNumber=2&" in seen.target and seen.attempt == 1


def hold_each_part(seen: Seen) -> bool:
    """Fail nothing, but keep each part a second (the proxy asks once it has the body)."""
    if seen.method == "PUT":
        time.sleep(1)
    return False


@pytest.fixture(scope="module")
def seaweed() -> Iterator[SeaweedS3]:
    with run_seaweed_s3("shortlist-panel-multipart") as server:
        yield server


def open_panel(browser: Any, service_url: str, token: str) -> Any:
    """A page signed in, in a fresh project, recording its progress bars' values."""
    from playwright.sync_api import expect

    expect.set_options(timeout=UI_TIMEOUT_MS)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(UI_TIMEOUT_MS)
    context.add_init_script(PROGRESS_PROBE)
    page = context.new_page()
    page.goto(service_url)
    page.get_by_label("API token").fill(token)
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice")
    page.get_by_label("New project").fill(PROJECT)
    page.get_by_role("button", name="Create").click()
    expect(page.locator("#project-select option:checked")).to_have_text(PROJECT)
    return page


def test_the_panel_uploads_a_large_file_in_parts_and_sends_only_the_failed_part_again(
    browser: Any, db_url: str, tmp_path: Path, seaweed: SeaweedS3, alice: users.NewUser
) -> None:
    from playwright.sync_api import expect

    path = tmp_path / "glacier-survey.pdf"
    path.write_bytes(padded_pdf(12 * MB))
    size = path.stat().st_size
    assert 2 * PART < size <= 3 * PART  # three parts, the last one short

    with service_behind_faults(db_url, tmp_path, seaweed, fail=first_try_of_part_2) as (
        proxy,
        service_url,
    ):
        page = open_panel(browser, service_url, alice.token)
        console_errors: list[str] = []
        page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda error: console_errors.append(str(error)))
        part_answers: list[tuple[int, int]] = []
        refusals: list[tuple[str, str, int]] = []
        failed_requests: list[str] = []

        def on_response(response: Any) -> None:
            number = part_number(response.url)
            if number and response.request.method == "PUT":
                part_answers.append((number, response.status))
            if response.status >= 400:
                refusals.append(
                    (response.request.method, urlsplit(response.url).path, response.status)
                )

        page.on("response", on_response)
        page.on("requestfailed", lambda request: failed_requests.append(request.url))

        with (
            page.expect_response(re.compile(r"/api/uploads$")) as granted,
            page.expect_response(
                lambda response: (
                    response.request.method == "POST"
                    and urlsplit(response.url).path == "/api/documents"
                )
            ) as registered,
        ):
            page.locator("#file-input").set_input_files(str(path))
        assert registered.value.status == 201, registered.value.text()
        grant = granted.value.json()
        assert grant["method"] == "MULTIPART", grant
        assert [(p["number"], p["offset"], p["size"]) for p in grant["parts"]] == [
            (1, 0, PART),
            (2, PART, PART),
            (3, 2 * PART, size - 2 * PART),
        ]
        assert all(p["url"].startswith(f"{proxy.url}/") for p in grant["parts"])

        row = page.locator("#documents-body tr").filter(has_text=path.name)
        expect(row.locator(".badge.ready")).to_have_text("Ready", timeout=EXTRACTION_TIMEOUT_MS)
        upload = page.locator(f'.upload-item[data-file-name="{path.name}"]')
        expect(upload).to_have_attribute("data-state", "done")
        expect(upload.locator(".upload-status")).to_have_text("Ready to search")

        # The store saw each part once and part 2 twice: only the failed part went again.
        assert [proxy.attempts("PUT", f"partNumber={n}&") for n in (1, 2, 3)] == [1, 2, 1]
        assert [(part_number(s.target), s.attempt) for s in proxy.seen if s.failed] == [(2, 1)]
        # The page read the store's 503 (rather than seeing the connection fail).
        assert sorted(part_answers) == [(1, 200), (2, 200), (2, 503), (3, 200)], part_answers
        assert failed_requests == []

        # Progress moved with the parts and reached the end.
        steps = [
            value
            for label, value in page.evaluate("() => window.progressSteps")
            if label == f"Upload of {path.name}"
        ]
        assert steps and steps[-1] == 1, steps
        assert all(0 <= step <= 1 for step in steps), steps
        assert steps == sorted(steps), "the bar never moves back, even for a part sent again"
        assert len({step for step in steps if 0 < step < 1}) >= 2, steps
        assert upload.locator("progress").evaluate("bar => bar.value") == 1

        # The joined file is the document: searching its text finds it.
        page.get_by_label("Search this project").fill("glacier survey")
        with page.expect_response(re.compile(r"/search$")) as searched:
            page.get_by_role("button", name="Search", exact=True).click()
        answer = searched.value.json()
        assert answer["results"], answer
        assert answer["results"][0]["document"]["name"] == path.name, answer
        expect(page.locator("#search-results .result").first).to_contain_text("glacier")

        # Nothing else went wrong once signed in: the injected fault was the only refusal.
        assert refusals == [("PUT", urlsplit(grant["parts"][1]["url"]).path, 503)], refusals
        assert len(console_errors) == 1, console_errors
        assert "status of 503" in console_errors[0]
        page.context.close()


def test_a_part_the_store_refuses_fails_the_upload_and_cancels_the_other_parts(
    browser: Any, db_url: str, tmp_path: Path, seaweed: SeaweedS3, alice: users.NewUser
) -> None:
    from playwright.sync_api import expect

    path = tmp_path / "expired.pdf"
    path.write_bytes(padded_pdf(17 * MB))
    assert 3 * PART < path.stat().st_size <= 4 * PART  # a fourth part waits for a free lane

    with service_behind_faults(db_url, tmp_path, seaweed, fail=hold_each_part) as (
        proxy,
        service_url,
    ):
        page = open_panel(browser, service_url, alice.token)
        started: list[int | None] = []
        page.on(
            "request",
            lambda request: (
                started.append(part_number(request.url)) if request.method == "PUT" else None
            ),
        )
        # The store refuses part 1 for good (and, like S3, lets the page read why).
        page.route(
            lambda url: part_number(url) == 1,
            lambda route: route.fulfill(
                status=403,
                headers={"Access-Control-Allow-Origin": service_url},
                content_type="application/xml",
                body="<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>",
            ),
        )

        with (
            page.expect_event("requestfailed", lambda request: part_number(request.url) == 2),
            page.expect_event("requestfailed", lambda request: part_number(request.url) == 3),
        ):
            page.locator("#file-input").set_input_files(str(path))
            upload = page.locator(f'.upload-item[data-file-name="{path.name}"]')
            expect(upload).to_have_attribute("data-state", "error")
            expect(upload.locator(".upload-status")).to_have_text(
                "Upload failed: part 1: Request has expired"
            )
        # Parts 2 and 3 were under way (the proxy holds each a second) and were cancelled;
        # a lane that took part 4 would have sent it at once. Absence has no event to wait
        # for: give it a moment.
        page.wait_for_timeout(1_000)

        assert sorted(number for number in started if number) == [1, 2, 3], started
        assert proxy.attempts("PUT", "partNumber=4&") == 0
        expect(page.locator("#documents-body tr").filter(has_text=path.name)).to_have_count(0)
        page.context.close()
