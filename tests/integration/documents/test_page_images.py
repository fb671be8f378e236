"""Through the REST door: a page of the original as a picture, the cited passage marked on it.

A real PDF is uploaded and extracted by the worker, searched, and the result's page is asked
for as an image: the PNG decodes, the passage's words are found and marked in yellow, a crop
is the passage's region, and every refusal has its code.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit

import psycopg
import pymupdf
import pytest
from psycopg.rows import dict_row

from service.services import users
from service.settings import Settings
from tests.integration.documents.conftest import Uploader, bearer, new_user

pytestmark = pytest.mark.anyio

PAGE_ONE = "Ice cores drilled in Greenland hold bubbles of old air. " * 6
PAGE_TWO = (
    "The survey team measured glacier retreat at forty stations along the fjord, "
    "finding that the calving front moved back by nine hundred metres in one season. "
    "Meltwater lakes formed on the surface each summer and drained through crevasses."
)


def _pdf() -> bytes:
    doc = pymupdf.open()
    for text in (PAGE_ONE, PAGE_TWO):
        page = doc.new_page()
        page.insert_textbox(pymupdf.Rect(72, 300, 540, 770), text, fontsize=12)
    data: bytes = doc.tobytes()
    doc.close()
    return data


def _pixmap(body: bytes) -> pymupdf.Pixmap:
    return pymupdf.Pixmap(body)


def _yellow_share(pixmap: pymupdf.Pixmap) -> float:
    """Share of pixels the highlighter coloured (red and green high, blue clearly lower)."""
    samples = pixmap.samples
    n = pixmap.n
    yellow = 0
    total = pixmap.width * pixmap.height
    for offset in range(0, len(samples), n * 7):  # a sample of the pixels is enough
        r, g, b = samples[offset], samples[offset + 1], samples[offset + 2]
        if r > 200 and g > 180 and b < 190 and r - b > 40:
            yellow += 1
    return yellow / max(1, total / 7)


async def _ready_pdf(client: Any, db_url: str) -> tuple[Any, Uploader, dict[str, Any]]:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(client, alice.token)
    created = await uploader.upload(alice.project.id, "glaciers.pdf", _pdf())
    assert created.status_code == 201, created.text
    document = await uploader.wait_settled(created.json()["id"])
    assert document["status"] == "ready", document
    return alice, uploader, document


async def _hit(client: Any, alice: Any, query: str) -> dict[str, Any]:
    found = await client.post(
        f"/api/projects/{alice.project.id}/search",
        json={"query": query},
        headers=bearer(alice.token),
    )
    assert found.status_code == 200, found.text
    result: dict[str, Any] = found.json()["results"][0]
    return result


async def test_a_cited_passage_is_marked_on_its_page_and_cropped_to(
    app_client: Any, db_url: str
) -> None:
    alice, uploader, document = await _ready_pdf(app_client, db_url)
    hit = await _hit(app_client, alice, "calving front glacier retreat")
    assert hit["pages"] == [2, 2]
    base = f"/api/documents/{document['id']}/pages/2/image"

    plain = await app_client.get(base, headers=uploader.headers)
    assert plain.status_code == 200, plain.text
    assert plain.headers["content-type"] == "image/png"
    assert plain.headers["x-content-type-options"] == "nosniff"
    page = _pixmap(plain.content)
    assert page.width == 1240  # an A4-wide page (595 points) at 150 dpi
    assert _yellow_share(page) == 0

    marked = await app_client.get(
        base, params={"highlight": hit["chunk_id"], "width": 600}, headers=uploader.headers
    )
    assert marked.status_code == 200, marked.text
    assert float(marked.headers["x-shortlist-covered"]) >= 0.9
    image = _pixmap(marked.content)
    assert image.width == 600
    assert _yellow_share(image) > 0.005

    cropped = await app_client.get(
        base,
        params={"highlight": hit["chunk_id"], "crop": "passage"},
        headers=uploader.headers,
    )
    assert cropped.status_code == 200, cropped.text
    assert cropped.headers["x-shortlist-cropped"] == "true"
    crop = _pixmap(cropped.content)
    assert crop.height < page.height / 3  # three lines of text and a margin, not the page
    assert _yellow_share(crop) > 0.1


async def test_a_search_result_links_its_page_image(app_client: Any, db_url: str) -> None:
    alice, uploader, document = await _ready_pdf(app_client, db_url)
    notes = await uploader.upload(
        alice.project.id, "fjord-notes.md", b"# Fjord\n\nThe calving front of the glacier.\n",
        "text/markdown",
    )  # fmt: skip
    assert (await uploader.wait_settled(notes.json()["id"]))["status"] == "ready"
    found = await app_client.post(
        f"/api/projects/{alice.project.id}/search",
        json={"query": "calving front glacier"},
        headers=uploader.headers,
    )
    by_name: dict[str, dict[str, Any]] = {}
    for result in found.json()["results"]:
        by_name.setdefault(result["document"]["name"], result)
    assert by_name["fjord-notes.md"]["page_image_url"] is None
    hit = by_name["glaciers.pdf"]
    link = urlsplit(hit["page_image_url"])
    assert link.path == f"/api/documents/{document['id']}/pages/2/image"
    assert parse_qs(link.query) == {"highlight": [hit["chunk_id"]]}
    shown = await app_client.get(f"{link.path}?{link.query}", headers=uploader.headers)
    assert shown.status_code == 200
    assert float(shown.headers["x-shortlist-covered"]) >= 0.9


async def test_a_read_token_may_view_and_another_user_may_not(app_client: Any, db_url: str) -> None:
    alice, _, document = await _ready_pdf(app_client, db_url)
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        read_token, _ = await users.create_token(conn, alice.user.id, scope="read")
    path = f"/api/documents/{document['id']}/pages/1/image"
    viewed = await app_client.get(path, headers=bearer(read_token))
    assert viewed.status_code == 200, viewed.text
    bob = await new_user(db_url, "bob")
    refused = await app_client.get(path, headers=bearer(bob.token))
    assert refused.status_code == 404
    assert refused.json()["code"] == "document_not_found"
    anonymous = await app_client.get(path)
    assert anonymous.status_code == 401


async def test_each_refusal_has_its_code(app_client: Any, db_url: str) -> None:
    alice, uploader, document = await _ready_pdf(app_client, db_url)
    base = f"/api/documents/{document['id']}/pages"
    cases: list[tuple[str, dict[str, Any], int, str]] = [
        (f"{base}/3/image", {}, 404, "page_not_found"),
        (f"{base}/0/image", {}, 404, "page_not_found"),
        (f"{base}/1/image", {"width": 10}, 400, "invalid_request"),
        (f"{base}/1/image", {"width": 100000}, 400, "invalid_request"),
        (f"{base}/1/image", {"crop": "passage"}, 400, "invalid_request"),
        (f"{base}/1/image", {"highlight": "someone-else:0"}, 404, "passage_not_found"),
        (f"{base}/1/image", {"highlight": f"{document['id']}:999"}, 404, "passage_not_found"),
    ]
    for path, params, status, code in cases:
        answer = await app_client.get(path, params=params, headers=uploader.headers)
        assert (answer.status_code, answer.json()["code"]) == (status, code), (path, params)

    notes = await uploader.upload(
        alice.project.id,
        "notes.md",
        b"# Notes\n\nPlain text has no pages to draw.\n",
        "text/markdown",
    )
    assert notes.status_code == 201, notes.text
    settled = await uploader.wait_settled(notes.json()["id"])
    assert settled["status"] == "ready", settled
    no_image = await app_client.get(
        f"/api/documents/{settled['id']}/pages/1/image", headers=uploader.headers
    )
    assert no_image.status_code == 404
    assert no_image.json()["code"] == "no_page_image"


async def test_a_page_that_cannot_be_drawn_in_time_fails_cleanly(
    settings: Settings, db_url: str
) -> None:
    from litestar.testing import AsyncTestClient

    from service.app import create_app

    hurried = settings.model_copy(
        update={"page_images": settings.page_images.model_copy(update={"timeout_seconds": 0.01})}
    )
    async with AsyncTestClient(app=create_app(hurried)) as client:
        _, uploader, document = await _ready_pdf(client, db_url)
        answer = await client.get(
            f"/api/documents/{document['id']}/pages/1/image", headers=uploader.headers
        )
    assert answer.status_code == 422, answer.text
    body = answer.json()
    assert body["code"] == "page_render_failed"
    assert body["details"]["reason"] == "extraction_timeout"


async def test_a_result_beside_a_figure_carries_it_and_its_picture(
    app_client: Any, db_url: str
) -> None:
    from tests.support.figure_pdf import CHART_CAPTION, figure_pdf

    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    created = await uploader.upload(alice.project.id, "retreat.pdf", figure_pdf())
    document = await uploader.wait_settled(created.json()["id"])
    assert document["status"] == "ready", document
    hit = await _hit(app_client, alice, "glacier retreat by survey station")
    figure = hit["figure"]
    assert figure is not None, hit
    assert (figure["number"], figure["page"], figure["label"]) == (1, 1, "Figure 1")
    assert figure["caption"] == CHART_CAPTION
    link = urlsplit(figure["image_url"])
    assert parse_qs(link.query) == {"figure": ["1"]}
    drawn = await app_client.get(f"{link.path}?{link.query}", headers=uploader.headers)
    assert drawn.status_code == 200, drawn.text
    picture = _pixmap(drawn.content)
    # The chart and its caption (380 x 226 points) with a margin, at 150 dpi: not the page.
    assert 800 < picture.width < 960 and picture.height < 600

    base = f"/api/documents/{document['id']}/pages"
    for path, code in ((f"{base}/1/image?figure=3", "figure_not_found"),
                       (f"{base}/2/image?figure=1", "page_not_found")):  # fmt: skip
        refused = await app_client.get(path, headers=uploader.headers)
        assert (refused.status_code, refused.json()["code"]) == (404, code)


async def test_a_passage_on_a_page_read_by_ocr_is_marked_where_it_was_recognised(
    app_client: Any, db_url: str
) -> None:
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_textbox(pymupdf.Rect(72, 200, 540, 320), PAGE_TWO, fontsize=14)
    pixmap = page.get_pixmap(dpi=150, colorspace=pymupdf.csGRAY, alpha=False)
    scan = pymupdf.open()
    scan.new_page(width=page.rect.width, height=page.rect.height).insert_image(
        page.rect, pixmap=pixmap
    )
    alice = await new_user(db_url, "alice")
    uploader = Uploader(app_client, alice.token)
    created = await uploader.upload(alice.project.id, "scan.pdf", scan.tobytes())
    document = await uploader.wait_settled(created.json()["id"], within=120)
    assert document["status"] == "ready", document
    if not document["ocr_pages"]:
        pytest.skip("no OCR engine available")
    hit = await _hit(app_client, alice, "calving front glacier retreat")
    link = urlsplit(hit["page_image_url"])
    marked = await app_client.get(
        f"{link.path}?{link.query}&crop=passage", headers=uploader.headers
    )
    assert marked.status_code == 200, marked.text
    assert float(marked.headers["x-shortlist-covered"]) >= 0.9
    assert marked.headers["x-shortlist-cropped"] == "true"
