"""Originals are served so that nothing in them runs on anyone's behalf (issue #13, item 1).

A document is served as the type of the kind its bytes were found to be (never the
type its uploader declared); only PDFs are ``inline``, everything else is a download;
the local store adds ``nosniff`` and ``Content-Security-Policy: sandbox``. Checked over
real HTTP on the local store and on SeaweedFS, first store by store for every kind, then
through the whole service (grant, upload, extraction, ``GET /api/documents/{id}/file``).
"""

from __future__ import annotations

import asyncio
import base64
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import httpx
import pytest

from extract import KINDS
from service.services.documents import presentation
from service.storage.blobs import LocalBlobStore, S3BlobStore
from tests.browser.conftest import create_user
from tests.browser.live_service import run_service
from tests.conftest import create_database, drop_database
from tests.support.originals import (
    hostile_html,
    hostile_svg,
    original_link,
    upload_document,
    wait_settled,
)
from tests.support.seaweed import SeaweedS3
from tests.unit.extract.samples import docx_report

REMOTE = "http://127.0.0.1:9"
HTML = hostile_html(REMOTE)
SVG = hostile_svg(REMOTE)
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

SERVED_AS: dict[str | None, tuple[str, str]] = {
    "pdf": ("application/pdf", "inline"),
    "docx": (DOCX, "attachment"),
    "pptx": (
        "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "attachment",
    ),
    "xlsx": ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "attachment"),
    "csv": ("text/csv", "attachment"),
    "html": ("text/html", "attachment"),
    "markdown": ("text/markdown", "attachment"),
    "text": ("text/plain", "attachment"),
    "epub": ("application/epub+zip", "attachment"),
    "notebook": ("application/x-ipynb+json", "attachment"),
    "webvtt": ("text/vtt", "attachment"),
    "image": ("application/octet-stream", "attachment"),
    None: ("application/octet-stream", "attachment"),
}
"""Kind found by extraction (None: not yet, or extraction failed) -> (type, disposition)."""


def test_every_kind_extraction_knows_has_a_served_type() -> None:
    assert set(SERVED_AS) == {*KINDS, None}


def media_type(response: httpx.Response) -> str:
    return response.headers["content-type"].split(";")[0].strip()


def assert_sandboxed(response: httpx.Response) -> None:
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["content-security-policy"] == "sandbox"


# -- each store, each kind ---------------------------------------------------------------


@pytest.mark.parametrize("kind", list(SERVED_AS), ids=[str(kind) for kind in SERVED_AS])
def test_the_local_store_serves_each_kind_as_its_type_sandboxed_and_only_pdfs_inline(
    local_store: LocalBlobStore, key: str, kind: str | None
) -> None:
    local_store.write(key, HTML, "text/html")  # stored under the type a hostile client declared
    served = presentation(kind)

    response = httpx.get(
        local_store.download_url(
            key,
            filename="Quarterly notes.html",
            content_type=served.content_type,
            disposition=served.disposition,
            expires_in=60,
        )
    )

    assert response.status_code == 200
    assert response.content == HTML
    expected_type, expected_disposition = SERVED_AS[kind]
    assert media_type(response) == expected_type
    assert response.headers["content-disposition"].startswith(f"{expected_disposition};")
    assert 'filename="Quarterly notes.html"' in response.headers["content-disposition"]
    assert_sandboxed(response)


@pytest.mark.parametrize("kind", list(SERVED_AS), ids=[str(kind) for kind in SERVED_AS])
def test_the_s3_store_link_overrides_the_uploaded_type_and_only_pdfs_are_inline(
    s3_store: S3BlobStore, key: str, kind: str | None
) -> None:
    s3_store.write(key, SVG, "image/svg+xml")
    served = presentation(kind)

    response = httpx.get(
        s3_store.download_url(
            key,
            filename="drawing.txt",
            content_type=served.content_type,
            disposition=served.disposition,
            expires_in=60,
        )
    )

    assert response.status_code == 200
    assert response.content == SVG
    expected_type, expected_disposition = SERVED_AS[kind]
    assert media_type(response) == expected_type
    assert response.headers["content-disposition"].startswith(f"{expected_disposition};")


def test_a_local_download_token_cannot_be_edited_to_inline(
    local_store: LocalBlobStore, key: str
) -> None:
    local_store.write(key, HTML, "text/html")
    url = local_store.download_url(
        key, filename="a.html", content_type="text/html", disposition="attachment", expires_in=60
    )
    token = url.split("download=", 1)[1]
    body = token.split(".")[1]
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["d"] = "inline"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    tampered = url.replace(body, forged)

    response = httpx.get(tampered)

    assert response.status_code == 403
    assert response.json()["code"] == "download_signature_invalid"


# -- through the whole service -------------------------------------------------------------


class Live(NamedTuple):
    store: str
    url: str
    token: str
    project_id: str

    def client(self) -> httpx.Client:
        return httpx.Client(
            base_url=self.url, headers={"Authorization": f"Bearer {self.token}"}, timeout=30
        )


def _s3_storage(s3: SeaweedS3) -> dict[str, object]:
    return {
        "backend": "s3",
        "s3_endpoint_url": s3.endpoint_url,
        "s3_region": s3.region,
        "s3_bucket": s3.bucket,
        "s3_access_key_id": s3.access_key_id,
        "s3_secret_access_key": s3.secret_access_key,
    }


@pytest.fixture(scope="module", params=["local", "s3"])
def live(
    request: pytest.FixtureRequest,
    server_url: str,
    template_database: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Live]:
    """The whole service (worker included) on the local store, then on SeaweedFS, with
    mallory, who uploads hostile originals."""
    store = str(request.param)
    overrides: dict[str, object] = {}
    if store == "s3":
        overrides["storage"] = _s3_storage(request.getfixturevalue("seaweed_s3"))
    name = f"shortlist_test_originals_{uuid.uuid4().hex[:12]}"
    db_url = create_database(server_url, name, template=template_database)
    data_dir: Path = tmp_path_factory.mktemp(f"originals-{store}")
    try:
        mallory = asyncio.run(create_user(db_url, "mallory"))
        with run_service(db_url, data_dir, **overrides) as url:
            yield Live(store, url, mallory.token, str(mallory.project.id))
    finally:
        drop_database(server_url, name)


def fetch_original(live: Live, client: httpx.Client, document_id: str) -> httpx.Response:
    link = original_link(client, document_id)
    assert link.startswith(live.url) == (live.store == "local"), link
    response = httpx.get(link, timeout=30)
    assert response.status_code == 200, response.text
    return response


def assert_served(live: Live, response: httpx.Response, kind: str | None) -> None:
    expected_type, expected_disposition = SERVED_AS[kind]
    assert media_type(response) == expected_type
    assert response.headers["content-disposition"].startswith(f"{expected_disposition};")
    if live.store == "local":
        assert_sandboxed(response)


def test_an_html_original_is_a_sandboxed_download_never_a_page(live: Live) -> None:
    with live.client() as client:
        created = upload_document(client, live.project_id, "notes.html", HTML, "text/html")
        document = wait_settled(client, created["id"])
        response = fetch_original(live, client, document["id"])

    assert document["status"] == "ready", document
    assert document["kind"] == "html"
    assert response.content == HTML
    assert_served(live, response, "html")


@pytest.mark.parametrize(
    ("filename", "declared", "data", "kind"),
    [
        ("drawing.txt", "image/svg+xml", SVG, "text"),
        ("page.md", "text/html", HTML, "markdown"),
        ("script.txt", "application/javascript", b"fetch('/api/session')\n", "text"),
    ],
    ids=["svg-as-text", "html-declared-for-markdown", "javascript-declared-for-text"],
)
def test_a_declared_type_is_never_recorded_or_served(
    live: Live, filename: str, declared: str, data: bytes, kind: str
) -> None:
    with live.client() as client:
        created = upload_document(client, live.project_id, filename, data, declared)
        document = wait_settled(client, created["id"])
        response = fetch_original(live, client, document["id"])

    assert created["content_type"] == SERVED_AS[kind][0]
    assert document["status"] == "ready", document
    assert document["kind"] == kind
    assert document["content_type"] == SERVED_AS[kind][0]
    assert response.content == data
    assert_served(live, response, kind)


def test_bytes_that_are_not_the_declared_kind_are_stored_as_what_they_are(live: Live) -> None:
    word = docx_report()
    with live.client() as client:
        disguised = upload_document(client, live.project_id, "summary.pdf", word, "application/pdf")
        fake_pdf = upload_document(client, live.project_id, "fake.pdf", HTML, "application/pdf")
        as_word = wait_settled(client, disguised["id"])
        refused = wait_settled(client, fake_pdf["id"])
        word_response = fetch_original(live, client, as_word["id"])
        refused_response = fetch_original(live, client, refused["id"])

    assert as_word["status"] == "ready", as_word
    assert (as_word["kind"], as_word["content_type"]) == ("docx", DOCX)
    assert_served(live, word_response, "docx")
    assert refused["status"] == "error"
    assert refused["error"]["code"] == "unsupported_format"
    assert refused_response.content == HTML
    assert_served(live, refused_response, None)


def test_the_grant_pins_the_kinds_type_so_no_store_keeps_a_declared_one(
    live: Live, s3_store: S3BlobStore
) -> None:
    with live.client() as client:
        granted = client.post(
            "/api/uploads",
            json={
                "project_id": live.project_id,
                "filename": "sketch.txt",
                "content_type": "image/svg+xml",
                "size": len(SVG),
            },
        )
    assert granted.status_code == 201, granted.text
    grant = granted.json()
    if live.store == "local":
        assert grant["headers"] == {"Content-Type": "text/plain"}
        refused = httpx.put(grant["url"], content=SVG, headers={"Content-Type": "image/svg+xml"})
        assert refused.status_code == 415
        assert refused.json()["code"] == "upload_content_type_mismatch"
    else:
        assert grant["fields"]["Content-Type"] == "text/plain"
        sent = httpx.post(
            grant["url"],
            data=grant["fields"],
            files={"file": ("sketch.txt", SVG, "image/svg+xml")},
        )
        assert sent.status_code == 204, sent.text
        stored = s3_store.head(grant["fields"]["key"])
        assert stored is not None
        assert stored.content_type == "text/plain"
