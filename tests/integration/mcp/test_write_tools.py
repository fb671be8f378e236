"""The MCP write tools over real HTTP with the SDK's client: add_document, import_url and
request_document, the owner's REST view and approval of requests, and a read token's
refusal at every write (MCP and REST).

One service (with its worker) for the module, on a database of its own that lets fetches
reach a loopback web site; each test makes its own users.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import httpx
import psycopg
import pytest
from psycopg.rows import dict_row

from service.services import users
from service.settings import Settings
from tests.conftest import create_database, drop_database, make_settings
from tests.integration.documents.conftest import bearer, make_pdf, new_user
from tests.integration.mcp.conftest import http_client, live_app, text_of
from tests.support.web_server import Reply, WebServer

pytestmark = pytest.mark.anyio

MAX_PENDING = 3


class Service:
    def __init__(self, url: str, db_url: str, settings: Settings) -> None:
        self.url, self.db_url, self.settings = url, db_url, settings


@pytest.fixture(scope="module")
def service(
    server_url: str, template_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    name = f"shortlist_test_mcp_write_{uuid.uuid4().hex[:12]}"
    db_url = create_database(server_url, name, template=template_database)
    data_dir: Path = tmp_path_factory.mktemp("mcp-write-data")
    settings = make_settings(
        db_url,
        data_dir,
        fetch={"allow_http": True, "allow_private_networks": True},
        requests={"max_pending_per_project": MAX_PENDING},
    )
    try:
        with live_app(settings) as url:
            yield Service(url, db_url, settings)
    finally:
        drop_database(server_url, name)


@pytest.fixture(scope="module")
def site() -> Iterator[WebServer]:
    server = WebServer(
        {
            "/atlas.pdf": Reply(
                200,
                {"Content-Type": "application/pdf"},
                make_pdf(["The basalt atlas maps every lava tube on the plateau."]),
            ),
            "/charter.pdf": Reply(
                200,
                {"Content-Type": "application/pdf"},
                make_pdf(["The harbour charter grants mooring rights to the guild."]),
            ),
        }
    )
    try:
        yield server
    finally:
        server.close()


async def wait_ready(rest: httpx.AsyncClient, token: str, document_id: str) -> dict[str, Any]:
    with anyio.fail_after(60):
        while True:
            answer = await rest.get(f"/api/documents/{document_id}", headers=bearer(token))
            body: dict[str, Any] = answer.json()
            if body["status"] in ("ready", "error"):
                return body
            await anyio.sleep(0.1)


async def test_write_tools_are_listed_as_not_read_only(service: Service) -> None:
    owner = await new_user(service.db_url, f"lister-{uuid.uuid4().hex[:6]}")
    async with http_client(service.url, owner.token) as client:
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}

    for name in ("add_document", "import_url", "request_document"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.read_only_hint is False, name
        assert annotations.destructive_hint is False, name
    for name in ("search_documents", "list_documents", "read_document", "find_mentions"):
        annotations = tools[name].annotations
        assert annotations is not None and annotations.read_only_hint is True, name
    assert tools["add_document"].input_schema["required"] == ["name", "content"]
    assert tools["request_document"].input_schema["required"] == ["title"]


async def test_add_document_makes_a_searchable_document_with_its_original_kept(
    service: Service,
) -> None:
    owner = await new_user(service.db_url, f"adder-{uuid.uuid4().hex[:6]}")
    content = "# Tide log\n\nThe spring tide reached the seventh marker at dawn.\n"
    async with http_client(service.url, owner.token) as client:
        added = await client.call_tool("add_document", {"name": "tide log", "content": content})
        found = await client.call_tool("search_documents", {"query": "spring tide marker"})
        again = await client.call_tool("add_document", {"name": "tide log.md", "content": "x"})
        empty = await client.call_tool("add_document", {"name": "blank.md", "content": "  \n"})

    assert not added.is_error, text_of(added)
    assert "searchable now" in text_of(added)
    document = added.structured_content["document"]
    assert document["name"] == "tide log.md" and document["status"] == "ready"
    assert not found.is_error and "tide log.md" in text_of(found)
    assert "seventh marker" in text_of(found)
    assert again.is_error and again.structured_content["error"]["code"] == (
        "duplicate_document_name"
    )
    assert empty.is_error and empty.structured_content["error"]["code"] == "invalid_request"
    async with httpx.AsyncClient(base_url=service.url) as rest:
        original = await rest.get(
            f"/api/documents/{document['id']}/file", headers=bearer(owner.token)
        )
        assert original.status_code == 200, original.text
        link = urlsplit(original.json()["url"])
        stored = await rest.get(f"{link.path}?{link.query}")
        listed = await rest.get(
            f"/api/projects/{owner.project.id}/documents", headers=bearer(owner.token)
        )
    assert stored.content == content.encode()
    assert [d["name"] for d in listed.json()["documents"]] == ["tide log.md"]


async def test_import_url_queues_a_fetch_that_becomes_searchable(
    service: Service, site: WebServer
) -> None:
    owner = await new_user(service.db_url, f"importer-{uuid.uuid4().hex[:6]}")
    async with http_client(service.url, owner.token) as client:
        queued = await client.call_tool("import_url", {"url": f"{site.url}/atlas.pdf"})
        refused = await client.call_tool(
            "import_url", {"url": "http://169.254.169.254/latest/meta-data/"}
        )
    assert not queued.is_error, text_of(queued)
    assert "pending" in text_of(queued) and "not searchable yet" in text_of(queued)
    document = queued.structured_content["document"]
    assert document["name"] == "atlas.pdf" and document["status"] == "pending"
    assert refused.is_error
    assert refused.structured_content["error"]["code"] == "url_not_allowed"
    async with httpx.AsyncClient(base_url=service.url) as rest:
        settled = await wait_ready(rest, owner.token, document["id"])
    assert settled["status"] == "ready", settled
    async with http_client(service.url, owner.token) as client:
        found = await client.call_tool("search_documents", {"query": "basalt lava tube"})
    assert "atlas.pdf" in text_of(found)


async def test_request_document_logs_joins_caps_and_never_fetches(
    service: Service, site: WebServer
) -> None:
    owner = await new_user(service.db_url, f"requester-{uuid.uuid4().hex[:6]}")
    seen = len(site.requests)
    async with http_client(service.url, owner.token) as client:
        first = await client.call_tool(
            "request_document",
            {
                "title": "Harbour charter of 1820",
                "source_url": f"{site.url}/charter.pdf",
                "reason": "The user asked about mooring rights.",
            },
        )
        joined = await client.call_tool("request_document", {"title": "  harbour CHARTER of 1820 "})
        too_long = await client.call_tool("request_document", {"title": "t" * 301})
        bad_url = await client.call_tool(
            "request_document", {"title": "Tide tables", "source_url": "file:///etc/passwd"}
        )
        for title in ("Tide tables", "Lighthouse log"):
            logged = await client.call_tool("request_document", {"title": title})
            assert not logged.is_error, text_of(logged)
        over = await client.call_tool("request_document", {"title": "One too many"})
        still_joins = await client.call_tool("request_document", {"title": "Tide tables"})
        listed = await client.call_tool("list_documents", {})

    assert not first.is_error, text_of(first)
    assert "NOT in the project" in text_of(first) and "nothing was fetched" in text_of(first)
    assert first.structured_content["request"]["joined_existing"] is False
    assert joined.structured_content["request"]["id"] == first.structured_content["request"]["id"]
    assert joined.structured_content["request"]["times_requested"] == 2
    assert "joined the existing request" in text_of(joined)
    assert too_long.is_error and "at most 300" in text_of(too_long)
    assert bad_url.is_error and bad_url.structured_content["error"]["code"] == "invalid_request"
    assert over.is_error
    assert over.structured_content["error"]["code"] == "too_many_document_requests"
    assert (
        not still_joins.is_error
        and still_joins.structured_content["request"]["times_requested"] == 2
    )
    assert "charter" not in text_of(listed).lower()  # a request is not a document
    assert len(site.requests) == seen  # nothing was fetched

    async with httpx.AsyncClient(base_url=service.url) as rest:
        answer = await rest.get(
            f"/api/projects/{owner.project.id}/requests", headers=bearer(owner.token)
        )
    assert answer.status_code == 200, answer.text
    requests = answer.json()["requests"]
    assert sorted(r["title"] for r in requests) == [
        "Harbour charter of 1820",
        "Lighthouse log",
        "Tide tables",
    ]
    charter = next(r for r in requests if r["title"] == "Harbour charter of 1820")
    assert charter["source_url"] == f"{site.url}/charter.pdf"
    assert charter["reason"] == "The user asked about mooring rights."
    assert charter["status"] == "pending" and charter["times_requested"] == 2


async def test_the_owner_approves_a_request_with_an_address_and_it_is_imported(
    service: Service, site: WebServer
) -> None:
    owner = await new_user(service.db_url, f"approver-{uuid.uuid4().hex[:6]}")
    other = await new_user(service.db_url, f"stranger-{uuid.uuid4().hex[:6]}")
    async with http_client(service.url, owner.token) as client:
        logged = await client.call_tool("request_document", {"title": "Harbour charter"})
    request_id = logged.structured_content["request"]["id"]
    base = f"/api/projects/{owner.project.id}/requests"
    async with httpx.AsyncClient(base_url=service.url) as rest:
        refused = await rest.post(
            f"{base}/{request_id}/approve",
            json={"url": "http://169.254.169.254/latest/meta-data/"},
            headers=bearer(owner.token),
        )
        after_refusal = await rest.get(base, headers=bearer(owner.token))
        strangers = await rest.post(
            f"/api/projects/{other.project.id}/requests/{request_id}/approve",
            json={"url": f"{site.url}/charter.pdf"},
            headers=bearer(other.token),
        )
        unknown = await rest.post(
            f"{base}/{uuid.uuid4()}/approve",
            json={"url": f"{site.url}/charter.pdf"},
            headers=bearer(owner.token),
        )
        approved = await rest.post(
            f"{base}/{request_id}/approve",
            json={"url": f"{site.url}/charter.pdf"},
            headers=bearer(owner.token),
        )
        twice = await rest.post(
            f"{base}/{request_id}/approve",
            json={"url": f"{site.url}/charter.pdf", "filename": "second.pdf"},
            headers=bearer(owner.token),
        )
        assert approved.status_code == 202, approved.text
        body = approved.json()
        settled = await wait_ready(rest, owner.token, body["document"]["id"])
        listed = await rest.get(base, headers=bearer(owner.token))

    assert refused.status_code == 400 and refused.json()["code"] == "url_not_allowed"
    assert after_refusal.json()["requests"][0]["status"] == "pending"
    assert strangers.status_code == 404
    assert strangers.json()["code"] == "document_request_not_found"
    assert unknown.status_code == 404
    assert body["request"]["status"] == "approved"
    assert body["request"]["document_id"] == body["document"]["id"]
    assert body["document"]["name"] == "charter.pdf"
    assert twice.status_code == 409
    assert twice.json()["code"] == "document_request_already_approved"
    assert settled["status"] == "ready", settled
    assert listed.json()["requests"][0]["document_id"] == body["document"]["id"]


async def read_token_for(service: Service, owner: users.NewUser) -> str:
    """A second token of ``owner``'s that may only read."""
    async with await psycopg.AsyncConnection.connect(
        service.db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        token, created = await users.create_token(conn, owner.user.id, label="ro", scope="read")
    assert created.scope == "read"
    return token


async def test_a_read_token_reads_everything_but_every_write_tool_is_refused(
    service: Service, site: WebServer
) -> None:
    owner = await new_user(service.db_url, f"scoped-{uuid.uuid4().hex[:6]}")
    reader = await read_token_for(service, owner)
    visits = len(site.requests)
    async with http_client(service.url, owner.token) as client:
        added = await client.call_tool(
            "add_document", {"name": "ledger.md", "content": "The salt ledger lists cargo."}
        )
    async with http_client(service.url, reader) as client:
        found = await client.call_tool("search_documents", {"query": "salt ledger cargo"})
        listed = await client.call_tool("list_documents", {})
        read = await client.call_tool("read_document", {"document": "ledger.md"})
        mentions = await client.call_tool("find_mentions", {"terms": "salt"})
        writes = {
            "add_document": await client.call_tool(
                "add_document", {"name": "more.md", "content": "More."}
            ),
            "import_url": await client.call_tool("import_url", {"url": f"{site.url}/atlas.pdf"}),
            "request_document": await client.call_tool("request_document", {"title": "Atlas"}),
        }

    assert not added.is_error, text_of(added)
    for result in (found, listed, read, mentions):
        assert not result.is_error, text_of(result)
    assert "ledger.md" in text_of(found) and "salt ledger" in text_of(read)
    for name, result in writes.items():
        assert result.is_error, name
        assert result.structured_content["error"]["code"] == "token_read_only", name
        assert "may only read" in text_of(result) and "write token" in text_of(result), name
    assert len(site.requests) == visits  # the refused import never fetched
    async with httpx.AsyncClient(base_url=service.url) as rest:
        documents = await rest.get(
            f"/api/projects/{owner.project.id}/documents", headers=bearer(owner.token)
        )
        requests = await rest.get(
            f"/api/projects/{owner.project.id}/requests", headers=bearer(owner.token)
        )
    assert [d["name"] for d in documents.json()["documents"]] == ["ledger.md"]
    assert requests.json()["requests"] == []


async def test_rest_refuses_every_write_of_a_read_token_and_answers_its_reads(
    service: Service, site: WebServer
) -> None:
    owner = await new_user(service.db_url, f"rest-scoped-{uuid.uuid4().hex[:6]}")
    reader = await read_token_for(service, owner)
    project = owner.project.id
    async with http_client(service.url, owner.token) as client:
        added = await client.call_tool(
            "add_document", {"name": "tides.md", "content": "Neap tides follow the half moon."}
        )
        logged = await client.call_tool("request_document", {"title": "Moon tables"})
    document_id = added.structured_content["document"]["id"]
    request_id = logged.structured_content["request"]["id"]
    reads = {
        "me": ("GET", "/api/me", None),
        "projects": ("GET", "/api/projects", None),
        "documents": ("GET", f"/api/projects/{project}/documents", None),
        "document": ("GET", f"/api/documents/{document_id}", None),
        "text": ("GET", f"/api/documents/{document_id}/text", None),
        "file": ("GET", f"/api/documents/{document_id}/file", None),
        "search": ("POST", f"/api/projects/{project}/search", {"query": "neap tides"}),
        "mentions": ("GET", f"/api/projects/{project}/mentions?terms=moon", None),
        "requests": ("GET", f"/api/projects/{project}/requests", None),
    }
    writes = {
        "grant": (
            "POST",
            "/api/uploads",
            {"project_id": str(project), "filename": "a.md", "content_type": None, "size": 3},
        ),
        "complete": (
            "POST",
            "/api/documents",
            {"project_id": str(project), "upload_id": str(uuid.uuid4())},
        ),
        "delete": ("DELETE", f"/api/documents/{document_id}", None),
        "reextract": ("POST", f"/api/documents/{document_id}/reextract", None),
        "import": ("POST", f"/api/projects/{project}/imports", {"url": f"{site.url}/atlas.pdf"}),
        "approve": (
            "POST",
            f"/api/projects/{project}/requests/{request_id}/approve",
            {"url": f"{site.url}/charter.pdf"},
        ),
        "project": ("POST", "/api/projects", {"name": "another"}),
        "original": (
            "POST",
            f"/api/documents/{document_id}/original",
            {"upload_id": str(uuid.uuid4())},
        ),
        "follow": ("PUT", f"/api/documents/{document_id}/sync", {"path": "a.md", "name": "a.md"}),
    }
    async with httpx.AsyncClient(base_url=service.url, headers=bearer(reader)) as rest:
        read_answers = {
            name: await rest.request(method, path, json=body)
            for name, (method, path, body) in reads.items()
        }
        write_answers = {
            name: await rest.request(method, path, json=body)
            for name, (method, path, body) in writes.items()
        }
        after = await rest.get(f"/api/documents/{document_id}")
        still_pending = await rest.get(f"/api/projects/{project}/requests")

    for name, answer in read_answers.items():
        assert answer.status_code == 200, (name, answer.text)
    assert read_answers["me"].json()["scope"] == "read"
    assert read_answers["search"].json()["results"], read_answers["search"].text
    for name, answer in write_answers.items():
        assert answer.status_code == 403, (name, answer.text)
        assert answer.json()["code"] == "token_read_only", name
        assert "write token" in answer.json()["message"], name
    assert after.json()["status"] == "ready"
    assert [r["status"] for r in still_pending.json()["requests"]] == ["pending"]
