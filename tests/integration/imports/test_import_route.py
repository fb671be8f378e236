"""POST /api/projects/{id}/imports end to end: refused addresses never connect, a document
is fetched by the worker and becomes searchable, a failed fetch is the document's error."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Iterator
from typing import Any

import anyio.to_thread
import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from service.settings import Settings
from tests.integration.documents.conftest import Uploader, bearer, make_pdf, new_user
from tests.support.compression import MB, gzip_of_zeros, nested_gzip_bomb
from tests.support.web_server import Reply, WebServer

pytestmark = pytest.mark.anyio


@pytest.fixture
def site() -> Iterator[WebServer]:
    server = WebServer(
        {
            "/papers/glaciers.pdf": Reply(
                200,
                {"Content-Type": "application/pdf"},
                make_pdf(["Glacier survey: the ice sheet lost mass.", "Appendix on firn density."]),
            ),
            "/moved": Reply(302, {"Location": "http://169.254.169.254/latest/meta-data/"}),
            "/fake.pdf": Reply(200, {"Content-Type": "application/pdf"}, b"<html>login</html>"),
            "/reports/batch": Reply(
                200,
                {"Content-Type": "text/html; charset=utf-8"},
                b"<html><head><title> Tide &amp; Current\n Tables </title></head>"
                b"<body><p>High water at noon.</p></body></html>",
            ),
            "/notes/untitled": Reply(
                200,
                {"Content-Type": "text/html"},
                b"<html><body><p>No title here.</p></body></html>",
            ),
        }
    )
    try:
        yield server
    finally:
        server.close()


def allowing_local_sites(settings: Settings) -> Settings:
    fetch = settings.fetch.model_copy(update={"allow_http": True, "allow_private_networks": True})
    return settings.model_copy(update={"fetch": fetch})


@pytest.fixture
async def local_client(settings: Settings) -> AsyncIterator[Any]:
    async with AsyncTestClient(app=create_app(allowing_local_sites(settings))) as client:
        yield client


@pytest.fixture
async def default_client(settings: Settings) -> AsyncIterator[Any]:
    async with AsyncTestClient(app=create_app(settings)) as client:
        yield client


async def test_an_import_becomes_a_searchable_document_named_after_the_address(
    local_client: Any, db_url: str, site: WebServer
) -> None:
    alice = await new_user(db_url, "alice")
    answer = await local_client.post(
        f"/api/projects/{alice.project.id}/imports",
        json={"url": f"{site.url}/papers/glaciers.pdf"},
        headers=bearer(alice.token),
    )
    assert answer.status_code == 202, answer.text
    document = answer.json()
    assert document["status"] == "pending"
    assert document["name"] == "glaciers.pdf"
    settled = await Uploader(local_client, alice.token).wait_settled(document["id"])
    assert settled["status"] == "ready", settled
    assert settled["page_count"] == 2
    assert settled["content_type"] == "application/pdf"
    found = await local_client.post(
        f"/api/projects/{alice.project.id}/search",
        json={"query": "firn density"},
        headers=bearer(alice.token),
    )
    assert found.json()["results"][0]["pages"] == [2, 2]
    # The same name again is refused like an upload's, before any fetch.
    again = await local_client.post(
        f"/api/projects/{alice.project.id}/imports",
        json={"url": f"{site.url}/papers/glaciers.pdf"},
        headers=bearer(alice.token),
    )
    assert again.status_code == 409
    assert again.json()["code"] == "duplicate_document_name"
    assert [path for path, _ in site.requests] == ["/papers/glaciers.pdf"]


@pytest.mark.parametrize(
    "path", ["/papers/glaciers.pdf", "/moved"], ids=["loopback", "loopback-redirect"]
)
async def test_on_the_defaults_a_local_address_is_refused_without_a_connection(
    default_client: Any, db_url: str, site: WebServer, path: str
) -> None:
    alice = await new_user(db_url, "alice")
    for url in (f"{site.url}{path}", f"https://127.0.0.1:{site.port}{path}"):
        answer = await default_client.post(
            f"/api/projects/{alice.project.id}/imports",
            json={"url": url},
            headers=bearer(alice.token),
        )
        assert answer.status_code == 400, answer.text
        assert answer.json()["code"] == "url_not_allowed"
    assert site.connections == 0
    listed = await default_client.get(
        f"/api/projects/{alice.project.id}/documents", headers=bearer(alice.token)
    )
    assert listed.json()["documents"] == []


async def test_a_redirect_to_metadata_leaves_the_document_failed_with_the_reason(
    local_client: Any, db_url: str, site: WebServer
) -> None:
    alice = await new_user(db_url, "alice")
    answer = await local_client.post(
        f"/api/projects/{alice.project.id}/imports",
        json={"url": f"{site.url}/moved", "filename": "metadata.html"},
        headers=bearer(alice.token),
    )
    assert answer.status_code == 202, answer.text
    settled = await Uploader(local_client, alice.token).wait_settled(answer.json()["id"])
    assert settled["status"] == "error"
    assert settled["error"]["code"] == "url_not_allowed"
    assert "169.254.169.254" in settled["error"]["message"]
    # Nothing was fetched: no original to open (the panel offers no Open), and the link says so.
    assert settled["has_original"] is False
    link = await local_client.get(
        f"/api/documents/{settled['id']}/file", headers=bearer(alice.token)
    )
    assert (link.status_code, link.json()["code"]) == (404, "document_not_found")
    assert "no original" in link.json()["message"]


async def test_a_lying_content_type_is_judged_by_the_bytes(
    local_client: Any, db_url: str, site: WebServer
) -> None:
    alice = await new_user(db_url, "alice")
    answer = await local_client.post(
        f"/api/projects/{alice.project.id}/imports",
        json={"url": f"{site.url}/fake.pdf"},
        headers=bearer(alice.token),
    )
    assert answer.status_code == 202, answer.text
    settled = await Uploader(local_client, alice.token).wait_settled(answer.json()["id"])
    assert settled["status"] == "error"
    assert settled["searchable"] is False


async def test_another_users_project_cannot_be_imported_into(
    local_client: Any, db_url: str, site: WebServer
) -> None:
    alice = await new_user(db_url, "alice")
    bob = await new_user(db_url, "bob")
    answer = await local_client.post(
        f"/api/projects/{alice.project.id}/imports",
        json={"url": f"{site.url}/papers/glaciers.pdf"},
        headers=bearer(bob.token),
    )
    assert answer.status_code == 404
    assert site.connections == 0


async def test_an_imported_web_page_is_named_from_its_title_else_its_path_with_its_extension(
    local_client: Any, db_url: str, site: WebServer
) -> None:
    alice = await new_user(db_url, "alice")
    uploader = Uploader(local_client, alice.token)
    names = {}
    for path in ("/reports/batch", "/notes/untitled"):
        answer = await local_client.post(
            f"/api/projects/{alice.project.id}/imports",
            json={"url": f"{site.url}{path}"},
            headers=bearer(alice.token),
        )
        assert answer.status_code == 202, answer.text
        settled = await uploader.wait_settled(answer.json()["id"])
        assert settled["status"] == "ready", settled
        names[path] = settled["name"]
    chosen = await local_client.post(
        f"/api/projects/{alice.project.id}/imports",
        json={"url": f"{site.url}/reports/batch", "filename": "my-copy"},
        headers=bearer(alice.token),
    )
    kept = await uploader.wait_settled(chosen.json()["id"])

    assert names == {
        "/reports/batch": "Tide & Current Tables.html",
        "/notes/untitled": "untitled.html",
    }
    assert kept["name"] == "my-copy", "a name the importer chose is kept"


FETCH_DEADLINE_SECONDS = 5.0


async def test_a_compression_bomb_is_refused_within_the_deadline_while_the_api_answers(
    settings: Settings, db_url: str, site: WebServer
) -> None:
    """The red team's bomb (#24): ``gzip, gzip`` of a few hundred bytes that decodes to
    256 MiB (4 GiB in their run), and a single gzip of 64 KB that decodes to 64 MiB, against a
    1 MB limit. Both end the document's error at once, with the right code, and another
    user's request is answered while a fetch is in flight (the worker runs in this app)."""
    local = allowing_local_sites(settings)
    storage = local.storage.model_copy(update={"max_upload_bytes": MB})
    fetch = local.fetch.model_copy(update={"timeout_seconds": FETCH_DEADLINE_SECONDS})
    local = local.model_copy(update={"storage": storage, "fetch": fetch})
    markdown = {"Content-Type": "text/markdown"}
    site.routes["/nested.md"] = Reply(
        200, {**markdown, "Content-Encoding": "gzip, gzip"}, nested_gzip_bomb()
    )
    site.routes["/bomb.md"] = Reply(
        200, {**markdown, "Content-Encoding": "gzip"}, gzip_of_zeros(64 * MB), stream=True
    )
    in_flight, release = threading.Event(), threading.Event()

    def held(path: str, headers: dict[str, str]) -> Reply:
        in_flight.set()
        release.wait(FETCH_DEADLINE_SECONDS)
        return Reply(200, {**markdown, "Content-Encoding": "gzip"}, gzip_of_zeros(64 * MB))

    site.routes["/held.md"] = held
    alice = await new_user(db_url, "alice")
    bob = await new_user(db_url, "bob")
    async with AsyncTestClient(app=create_app(local)) as client:
        uploader = Uploader(client, alice.token)
        ids = {}
        for path in ("/held.md", "/nested.md", "/bomb.md"):
            answer = await client.post(
                f"/api/projects/{alice.project.id}/imports",
                json={"url": f"{site.url}{path}"},
                headers=bearer(alice.token),
            )
            assert answer.status_code == 202, answer.text
            ids[path] = answer.json()["id"]
        try:
            assert await anyio.to_thread.run_sync(in_flight.wait, FETCH_DEADLINE_SECONDS)
            listed = await client.get("/api/projects", headers=bearer(bob.token))
            assert listed.status_code == 200, "answered while a fetch is in flight"
        finally:
            release.set()
        within = FETCH_DEADLINE_SECONDS + 5
        settled = {path: await uploader.wait_settled(ids[path], within) for path in ids}

    codes = {path: (body["status"], body["error"]["code"]) for path, body in settled.items()}
    assert codes == {
        "/held.md": ("error", "url_too_large"),
        "/nested.md": ("error", "url_unsupported_encoding"),
        "/bomb.md": ("error", "url_too_large"),
    }
    assert "more than once (gzip, gzip)" in settled["/nested.md"]["error"]["message"]
    assert "the limit is 1 MB" in settled["/bomb.md"]["error"]["message"]
    assert all(headers["accept-encoding"] == "identity" for headers in site.headers)
