"""The panel in headless Chromium against the real service: sign in, upload, follow
extraction, see why a scan is not searchable, search, open a citation at its page, delete."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from service.services import users
from tests.browser.chromium import UI_TIMEOUT_MS
from tests.support.paths import CORPUS_DIR, REPO_DIR

ARTIFACTS = REPO_DIR / "test-artifacts"
REAL_PDF = CORPUS_DIR / "tables" / "github_sample.pdf"
"""A real one-page text PDF from the corpus (the multi-page papers take ~30 s to extract here)."""

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not REAL_PDF.exists(), reason=f"the shared corpus is missing ({REAL_PDF})"),
]

EXTRACTION_TIMEOUT_MS = 90_000
FIELD_NOTES_PAGES = [
    "Field notes about coastal birds and the tides of the estuary.",
    "Observations of wetland insects after heavy rain.",
    "The quokka is a small marsupial living on Rottnest Island.",
    "Closing remarks on seasonal migration.",
]


def field_notes_pdf() -> bytes:
    """A text PDF whose only mention of quokkas is on page 3.

    Each page repeats its sentence to about a chunk's length, so no passage spans two pages.
    """
    import pymupdf

    document = pymupdf.open()
    for text in FIELD_NOTES_PAGES:
        page = document.new_page()
        margin = pymupdf.Rect(72, 72, page.rect.width - 72, page.rect.height - 72)
        page.insert_textbox(margin, " ".join([text] * 16), fontsize=11)
    data: bytes = document.tobytes()
    document.close()
    return data


def scanned_pdf(directory: Path) -> Path:
    """A scan OCR cannot read (a scanned blank sheet): it stays "Not searchable"."""
    from tests.unit.extract import samples

    path = directory / "blank-scan.pdf"
    path.write_bytes(samples.pdf_pages("s"))
    return path


def as_upload(path: Path) -> dict[str, Any]:
    """A file for the picker (Playwright cannot mix paths and in-memory files)."""
    return {"name": path.name, "mimeType": "application/pdf", "buffer": path.read_bytes()}


def test_a_person_uploads_searches_opens_a_citation_and_deletes(
    browser: Any, service_url: str, alice: users.NewUser, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    ARTIFACTS.mkdir(exist_ok=True)
    expect.set_options(timeout=UI_TIMEOUT_MS)  # CI machines are busy; nothing here waits idly
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(UI_TIMEOUT_MS)
    page = context.new_page()
    console_errors: list[str] = []
    page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda error: console_errors.append(str(error)))

    # Sign in with the keyboard; the token stays out of page storage.
    page.goto(service_url)
    page.get_by_label("API token").fill(alice.token)
    page.get_by_label("API token").press("Enter")
    expect(page.locator("#user-name")).to_have_text("alice")
    stored = page.evaluate("() => JSON.stringify([{...localStorage}, {...sessionStorage}])")
    assert alice.token not in stored
    assert "shortlist_session" not in page.evaluate("() => document.cookie")

    # Projects: one whose name is HTML is shown as text; then the one we work in.
    html_name = '<b>Papers</b> & "notes"'
    for name in (html_name, "Field notes"):
        page.get_by_label("New project").fill(name)
        page.get_by_role("button", name="Create").click()
        expect(page.locator("#project-select option:checked")).to_have_text(name)
    expect(page.locator("#project-select option", has_text="Papers")).to_have_text(html_name)
    assert page.locator("#project-select b").count() == 0

    # Upload several files at once; a refused one says why before any byte moves.
    scan = scanned_pdf(tmp_path)
    odd_name = 'Q&A <b>draft "v2".txt'  # no "/": names may not carry a folder
    page.locator("#file-input").set_input_files(
        [
            as_upload(REAL_PDF),
            {"name": "field-notes.pdf", "mimeType": "application/pdf", "buffer": field_notes_pdf()},
            as_upload(scan),
            {"name": "tool.exe", "mimeType": "application/x-msdownload", "buffer": b"MZ" * 64},
            {"name": odd_name, "mimeType": "text/plain", "buffer": b"Draft answers.\n" * 3},
        ]
    )
    refused = page.locator('.upload-item[data-file-name="tool.exe"]')
    expect(refused).to_have_attribute("data-state", "error")
    expect(refused.locator(".upload-status")).to_contain_text("Refused:")
    expect(refused.locator(".upload-status")).to_contain_text("not a supported file type")

    # Statuses change from pending to ready (or not searchable) without a reload.
    rows = page.locator("#documents-body tr")
    real_row = rows.filter(has_text=REAL_PDF.name)
    notes_row = rows.filter(has_text="field-notes.pdf")
    scan_row = rows.filter(has_text=scan.name)
    odd_row = rows.filter(has_text=odd_name)
    for row in (real_row, notes_row, odd_row):
        expect(row.locator(".badge.ready")).to_have_text("Ready", timeout=EXTRACTION_TIMEOUT_MS)
    expect(odd_row.locator(".name")).to_have_text(odd_name)
    assert page.locator("#documents-body b, #upload-list b").count() == 0
    for name in (REAL_PDF.name, "field-notes.pdf"):
        upload = page.locator(f'.upload-item[data-file-name="{name}"]')
        expect(upload).to_have_attribute("data-state", "done")
        assert upload.locator("progress").evaluate("bar => bar.value") == 1
    expect(notes_row.locator("td").nth(1)).to_have_text(str(len(FIELD_NOTES_PAGES)))

    # The scan is labelled, with its reason on hover and in the accessible popover.
    summary = scan_row.locator("details.not-searchable summary")
    expect(summary).to_have_text("Not searchable", timeout=EXTRACTION_TIMEOUT_MS)
    reason = summary.get_attribute("title")
    assert reason
    summary.focus()
    page.keyboard.press("Enter")
    popover = scan_row.locator("details.not-searchable .popover")
    expect(popover).to_be_visible()
    expect(popover.locator(".reason")).to_have_text(reason)
    expect(popover.locator(".hint")).to_contain_text("a version with a text layer")
    assert popover.get_attribute("id") == summary.get_attribute("aria-describedby")

    # Delete, after confirming in a dialog.
    dialogs: list[str] = []

    def accept(dialog: Any) -> None:
        dialogs.append(dialog.message)
        dialog.accept()

    page.on("dialog", accept)
    odd_row.get_by_role("button", name=f"Delete {odd_name}").click()
    expect(odd_row).to_have_count(0)
    odd_upload = page.locator(".upload-item").filter(has_text=odd_name)
    expect(odd_upload.locator(".upload-status")).to_have_text("Deleted")
    expect(rows).to_have_count(3)
    assert len(dialogs) == 1
    assert odd_name in dialogs[0]

    # Search: highlighted terms, a not-reranked marker, a citation that opens its page.
    page.get_by_label("Search this project").fill("quokkas on Rottnest")
    with page.expect_response(re.compile(r"/search$")) as searched:
        page.get_by_role("button", name="Search", exact=True).click()
    answer = searched.value.json()
    results = page.locator("#search-results .result")
    expect(results).to_have_count(len(answer["results"]))
    expect(page.locator(".not-reranked")).to_be_visible()
    assert answer["results"][0]["document"]["name"] == "field-notes.pdf", answer
    first_page = answer["results"][0]["pages"][0]
    assert first_page == 1 + next(
        index for index, text in enumerate(FIELD_NOTES_PAGES) if "quokka" in text
    )
    # The sentences that answer are marked, not every query word.
    best = answer["results"][0]
    sentences = [best["text"][start:end] for start, end in best["answer_spans"]]
    assert sentences and any("quokka" in sentence.lower() for sentence in sentences), best
    marks = results.first.locator("mark.answer").all_text_contents()
    assert marks and all(any(mark in s for s in sentences) for mark in marks), (marks, sentences)
    assert "rottnest" in " ".join(marks).lower() or "quokka" in " ".join(marks).lower()
    citation = results.first.locator("a.citation")
    expect(citation).to_have_text(f"page {first_page}")
    # Relevance as a bar and words, not a bare float; no "does not answer" notice here.
    assert answer["insufficient_evidence"] is False, answer
    meter = results.first.locator("meter.relevance-bar")
    expect(meter).to_have_attribute("value", str(answer["results"][0]["relevance"]))
    label = answer["results"][0]["relevance_label"]
    expect(results.first.locator(".relevance-words")).to_have_text(f"{label.title()} relevance")
    expect(page.locator(".no-evidence")).to_have_count(0)

    page.screenshot(path=str(ARTIFACTS / "panel-desktop.png"))
    page.screenshot(path=str(ARTIFACTS / "panel-desktop-full.png"), full_page=True)

    with context.expect_page() as opened:
        citation.click()
    original = opened.value
    original.wait_for_url(re.compile(r"/blobs/"), timeout=15_000)
    assert original.url.endswith(f"#page={first_page}")
    original.close()

    # A question the documents do not answer says so instead of "N passages".
    page.get_by_label("Search this project").fill("how long to bake sourdough bread on Rottnest")
    with page.expect_response(re.compile(r"/search$")) as searched:
        page.get_by_role("button", name="Search", exact=True).click()
    absent = searched.value.json()
    assert absent["insufficient_evidence"] is True, absent
    expect(page.locator(".no-evidence")).to_contain_text("do not seem to answer this")
    expect(page.locator("#search-results .relevance-words").first).to_have_text("Low relevance")

    # Phone width: nothing overflows sideways.
    page.set_viewport_size({"width": 360, "height": 740})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    page.evaluate("() => window.scrollTo(0, 0)")
    page.screenshot(path=str(ARTIFACTS / "panel-phone.png"))
    page.screenshot(path=str(ARTIFACTS / "panel-phone-full.png"), full_page=True)

    # Signing out forgets the session, also across a reload.
    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_label("API token")).to_be_visible()
    page.reload()
    expect(page.get_by_label("API token")).to_be_visible()

    expected = re.compile(r"status of (401|415)")  # signed out; the refused tool.exe
    assert [error for error in console_errors if not expected.search(error)] == []
    context.close()
