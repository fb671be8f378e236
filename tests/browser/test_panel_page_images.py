"""Results shown on their pages in Chromium: each result's passage cropped from its page and
marked beside its text; a click shows the whole page with the passage marked; the document
view pages through page images beside the extracted text."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from service.cli.client import ShortlistClient
from service.services import users
from tests.browser.test_panel_browser import ARTIFACTS
from tests.browser.test_panel_passages import signed_in
from tests.support.paths import CORPUS_DIR

pytestmark = pytest.mark.browser

PAPER = CORPUS_DIR / "papers" / "naacl06-shinyama.pdf"


@pytest.fixture
def paper_project(service_url: str, alice: users.NewUser, tmp_path: Path) -> str:
    """Alice's project holds a two-column paper from the corpus, ready."""
    if not PAPER.exists():
        pytest.skip("needs the shared corpus")
    client = ShortlistClient(service_url, alice.token)
    try:
        document = client.upload(str(alice.project.id), PAPER)
        assert client.wait(document["id"], timeout=180)["status"] == "ready"
    finally:
        client.close()
    return str(alice.project.id)


def test_a_result_shows_its_passage_on_its_page(
    browser: Any, service_url: str, alice: users.NewUser, paper_project: str
) -> None:
    from playwright.sync_api import expect

    page = signed_in(browser, service_url, alice.token, viewport={"width": 1280, "height": 900})
    expect(page.locator("#documents-body tr", has_text="naacl06-shinyama.pdf")).to_be_visible()
    page.get_by_label("Search this project").fill(
        "unrestricted relation discovery clustering articles"
    )
    page.get_by_label("Search this project").press("Enter")
    first = page.locator("#search-results .result").first
    crop = first.locator(".result-picture img.result-crop")
    # The paper underlines words: underlined in the passage, never shown as <u> tags.
    expect(first.locator(".passage u").first).to_be_visible()
    expect(page.locator("#search-results")).not_to_contain_text("<u>")
    expect(crop).to_be_visible()
    page.wait_for_function(
        "image => image.complete && image.naturalWidth > 0", arg=crop.element_handle()
    )
    assert "crop=passage" in (crop.get_attribute("src") or "")
    # Beside the text, not under it.
    text_box = first.locator(".result-body").bounding_box()
    crop_box = crop.bounding_box()
    assert text_box is not None and crop_box is not None
    assert crop_box["x"] > text_box["x"] + text_box["width"] - 1
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "panel-page-image.png"))

    first.get_by_role("button", name="with the passage marked").click()
    dialog = page.locator("#page-view")
    expect(dialog).to_be_visible()
    whole = dialog.locator(".page-view-image")
    page.wait_for_function(
        "image => image.complete && image.naturalWidth > 0", arg=whole.element_handle()
    )
    assert "highlight=" in (whole.get_attribute("src") or "")
    assert "crop=" not in (whole.get_attribute("src") or "")
    page.screenshot(path=str(ARTIFACTS / "panel-page-view.png"))
    dialog.get_by_role("button", name="Close").click()
    expect(dialog).to_be_hidden()

    page.get_by_role("button", name="View the text of naacl06-shinyama.pdf").click()
    view = page.locator("#document-view")
    picture = view.locator(".document-view-image")
    expect(picture).to_be_visible()
    page.wait_for_function(
        "image => image.complete && image.naturalWidth > 0", arg=picture.element_handle()
    )
    assert "/pages/1/image" in (picture.get_attribute("src") or "")
    view.get_by_role("button", name="Next page").click()
    page.wait_for_function(
        "image => image.src.includes('/pages/2/image') && image.complete && image.naturalWidth > 0",
        arg=picture.element_handle(),
    )
    page.context.close()


def test_a_result_beside_a_figure_shows_the_figure_with_its_caption(
    browser: Any, service_url: str, alice: users.NewUser, tmp_path: Path
) -> None:
    from playwright.sync_api import expect

    from tests.support.figure_pdf import CHART_CAPTION, figure_pdf

    path = tmp_path / "retreat.pdf"
    path.write_bytes(figure_pdf())
    client = ShortlistClient(service_url, alice.token)
    try:
        document = client.upload(str(alice.project.id), path)
        assert client.wait(document["id"], timeout=120)["status"] == "ready"
    finally:
        client.close()
    page = signed_in(browser, service_url, alice.token, viewport={"width": 1280, "height": 900})
    expect(page.locator("#documents-body tr", has_text="retreat.pdf")).to_be_visible()
    page.get_by_label("Search this project").fill("glacier retreat by survey station")
    page.get_by_label("Search this project").press("Enter")
    figure = page.locator("#search-results .result").first.locator(".result-figure")
    expect(figure.locator("figcaption")).to_have_text(CHART_CAPTION)
    image = figure.locator("img")
    page.wait_for_function(
        "image => image.complete && image.naturalWidth > 0", arg=image.element_handle()
    )
    assert "figure=1" in (image.get_attribute("src") or "")
    figure.get_by_role("button", name="Show Figure 1 of retreat.pdf").click()
    expect(page.locator("#page-view-title")).to_have_text("retreat.pdf — Figure 1")
    page.context.close()
