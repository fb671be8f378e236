"""The API reference is the contract: served, complete, and true to what the service answers.

- ``/schema/openapi.json`` and ``.yaml`` are served and say the same;
- every operation has a summary, a description that states its token scope, and security
  as it really is (none for the public ones);
- every error a handler can raise (read from the source by ``tests/support/raised_errors``)
  is among its documented responses;
- a client generated from the schema (``datamodel-code-generator``'s pydantic models, extra
  fields forbidden) accepts a real answer of every operation, and each error the service
  gave along the way (no token, a read token for a write, ids that do not exist) is
  documented for its operation, body and all.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import httpx
import pydantic
import pytest
import yaml

from service.app import create_app
from service.runtime import open_runtime
from service.services import document_requests, users
from service.services.ingest import ingest_file
from service.settings import Settings
from service.storage.db import connection
from tests.conftest import create_database, drop_database, make_settings
from tests.integration.mcp.conftest import live_app
from tests.reliability.isolation.operations import OPERATIONS, SCHEMA
from tests.support.raised_errors import raisable

SCOPE_SENTENCE = {
    "public": "Needs no token.",
    "read": "Needs an API token",
    "write": "Needs a write token",
}


def _handlers() -> dict[str, Any]:
    app = create_app(make_settings("postgresql://unused@127.0.0.1:1/unused", Path("/nonexistent")))
    return {
        handler.operation_id: handler
        for route in app.routes
        for handler in getattr(route, "route_handlers", [])
        if route.path.startswith("/api/") and handler.operation_id
    }


HANDLERS = _handlers()


def _operation(operation_id: str) -> dict[str, Any]:
    for item in SCHEMA["paths"].values():
        for spec in item.values():
            if isinstance(spec, dict) and spec.get("operationId") == operation_id:
                return spec
    raise KeyError(operation_id)


def documented_codes(operation_id: str) -> dict[str, set[str]]:
    """Status -> the error codes the schema documents for it."""
    codes: dict[str, set[str]] = {}
    for status, response in _operation(operation_id)["responses"].items():
        schema = response.get("content", {}).get("application/json", {}).get("schema", {})
        refs = [entry["$ref"] for entry in schema.get("oneOf", [schema]) if "$ref" in entry]
        for ref in refs:
            component = SCHEMA["components"]["schemas"][ref.rsplit("/", 1)[1]]
            code = component.get("properties", {}).get("code", {}).get("const")
            if code is not None:
                codes.setdefault(status, set()).add(code)
    return codes


def test_the_schema_is_served_as_json_and_yaml(settings: Settings) -> None:
    with live_app(settings) as url:
        as_json = httpx.get(f"{url}/schema/openapi.json", timeout=30)
        as_yaml = httpx.get(f"{url}/schema/openapi.yaml", timeout=30)

    assert as_json.status_code == 200
    assert as_yaml.status_code == 200, as_yaml.text[:200]
    assert yaml.safe_load(as_yaml.text) == as_json.json()
    assert as_json.json()["paths"].keys() == SCHEMA["paths"].keys()


def test_every_operation_has_a_summary_a_scope_and_true_security() -> None:
    problems = []
    for operation in OPERATIONS:
        spec = _operation(operation.operation_id)
        scope = HANDLERS[operation.operation_id].opt["scope"]
        if not spec.get("summary") or not spec.get("description"):
            problems.append(f"{operation.operation_id}: no summary or description")
        if not spec.get("description", "").startswith(SCOPE_SENTENCE[scope]):
            problems.append(f"{operation.operation_id}: the description does not state its scope")
        if (scope == "public") != (not spec.get("security")):
            problems.append(
                f"{operation.operation_id}: security {spec.get('security')} for {scope}"
            )
    assert not problems, "\n".join(problems)
    assert HANDLERS["GetHealth"].opt["scope"] == "public"
    assert "security" not in _operation("GetHealth")
    assert "security" not in SCHEMA, "security is declared per operation"


def test_every_error_a_handler_can_raise_is_documented_for_its_operation() -> None:
    problems = []
    for operation_id, handler in HANDLERS.items():
        documented = set(handler.opt["documented_errors"])
        # A status answered with a body of its own (the health check's 503) is handled there.
        handled = {
            int(status)
            for status in _operation(operation_id)["responses"]
            if status not in documented_codes(operation_id)
        }
        found = raisable(f"{handler.fn.__module__}.{handler.fn.__qualname__}")
        missing = {
            e.code for e in found if (e.status < 500 or e.status == 503) and e.status not in handled
        } - documented
        if missing:
            problems.append(f"{operation_id} can raise {sorted(missing)}")
    assert not problems, "add these to the operation's raises:\n" + "\n".join(problems)


def test_write_operations_are_the_ones_that_refuse_a_read_token() -> None:
    writes = {op for op, handler in HANDLERS.items() if handler.opt["scope"] == "write"}
    checked = {
        op
        for op, handler in HANDLERS.items()
        if "token_read_only"
        in {e.code for e in raisable(f"{handler.fn.__module__}.{handler.fn.__qualname__}")}
    }
    assert checked == writes


# --- a generated client against real answers ----------------------------------------------


@pytest.fixture(scope="module")
def models(tmp_path_factory: pytest.TempPathFactory) -> ModuleType:
    """Pydantic models generated from the app's schema, extra fields forbidden."""
    folder = tmp_path_factory.mktemp("generated-client")
    source = folder / "openapi.yaml"
    source.write_text(yaml.safe_dump(SCHEMA), encoding="utf-8")
    target = folder / "shortlist_models.py"
    subprocess.run(
        [
            str(Path(sys.executable).with_name("datamodel-codegen")),
            "--input",
            str(source),
            "--input-file-type",
            "openapi",
            "--output-model-type",
            "pydantic_v2.BaseModel",
            "--enum-field-as-literal",
            "all",
            "--extra-fields",
            "forbid",
            "--formatters",
            "ruff-format",
            "--output",
            str(target),
        ],
        check=True,
        capture_output=True,
    )
    spec = importlib.util.spec_from_file_location("shortlist_models", target)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _schema_names(schema: dict[str, Any]) -> list[str]:
    refs = [entry["$ref"] for entry in schema.get("oneOf", [schema]) if "$ref" in entry]
    return [ref.rsplit("/", 1)[1] for ref in refs]


def check_answer(models: ModuleType, operation_id: str, response: httpx.Response) -> list[str]:
    """Problems with an answer: an undocumented status or code, or a body the generated
    model of its documented schema refuses."""
    status = str(response.status_code)
    documented = _operation(operation_id)["responses"]
    if status not in documented:
        return [f"{operation_id} answered undocumented {status}: {response.text[:200]}"]
    content = documented[status].get("content", {})
    media_type = response.headers.get("content-type", "").split(";")[0]
    if content and "application/json" not in content:  # a picture, say: its type is the promise
        return [] if media_type in content else [f"{operation_id} {status} is {media_type}"]
    schema = content.get("application/json", {}).get("schema")
    if schema is None or schema.get("type") == "null":
        return [] if not response.content else [f"{operation_id} {status} has an undocumented body"]
    names = _schema_names(schema)
    if not names:
        return [f"{operation_id} {status}: the documented body is not a model"]
    body = response.json()
    failures = []
    for name in names:
        try:
            getattr(models, name).model_validate(body)
            return []
        except pydantic.ValidationError as exc:
            failures.append(f"{name}: {exc.errors()[:2]}")
    return [f"{operation_id} {status} {body}: fits none of {failures}"]


class World(NamedTuple):
    url: str
    token: str
    read_token: str
    project_id: str
    document_id: str
    request_id: str
    pdf_id: str


async def _populate(settings: Settings, folder: Path) -> tuple[str, str, str, str, str, str]:
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            dana = await users.create_user(conn, "dana")
            read_token, _ = await users.create_token(conn, dana.user.id, scope="read")
        path = folder / "harbour-log.md"
        path.write_text("# Harbour log\n\nThe ferry to the island leaves at nine.\n")
        ingested = await ingest_file(runtime, dana.project, path)
        assert ingested.document is not None, ingested.error
        chart = folder / "tide-chart.pdf"
        chart.write_bytes(_one_page_pdf("Tide chart: high water at noon."))
        charted = await ingest_file(runtime, dana.project, chart)
        assert charted.document is not None, charted.error
        async with connection(runtime.pool) as conn:
            principal = await users.authenticate(conn, dana.token)
            logged = await document_requests.request_document(
                runtime, conn, principal, project_id=dana.project.id, title="Tide tables 2026"
            )
    return (
        dana.token,
        read_token,
        str(dana.project.id),
        str(ingested.document.id),
        str(logged.request.id),
        str(charted.document.id),
    )


def _one_page_pdf(text: str) -> bytes:
    import pymupdf

    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), text)
    data: bytes = doc.tobytes()
    doc.close()
    return data


@pytest.fixture(scope="module")
def world(
    server_url: str, template_database: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    name = f"shortlist_test_openapi_{uuid.uuid4().hex[:12]}"
    db_url = create_database(server_url, name, template=template_database)
    settings = make_settings(
        db_url,
        tmp_path_factory.mktemp("openapi-data"),
        server={"run_worker": False},
        fetch={"allow_http": True, "allow_private_networks": True},
    )
    try:
        values = asyncio.run(_populate(settings, tmp_path_factory.mktemp("openapi-files")))
        with live_app(settings) as url:
            yield World(url, *values)
    finally:
        drop_database(server_url, name)


def _send_bytes(client: httpx.Client, grant: dict[str, Any], data: bytes) -> None:
    assert grant["method"] == "PUT", grant
    parts = urlsplit(grant["url"])
    sent = client.put(f"{parts.path}?{parts.query}", content=data, headers=grant["headers"])
    assert sent.status_code in (200, 201, 204), sent.text


def test_a_generated_client_accepts_a_real_answer_of_every_operation(
    world: World, models: ModuleType
) -> None:
    answers: dict[str, httpx.Response] = {}
    auth = {"Authorization": f"Bearer {world.token}"}
    with httpx.Client(base_url=world.url, headers=auth, timeout=30) as api:

        def call(operation_id: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
            answers[operation_id] = response = api.request(method, path, **kwargs)
            assert response.status_code < 300, f"{operation_id}: {response.text}"
            return response

        project, document = world.project_id, world.document_id
        call("GetHealth", "GET", "/api/health")
        call("GetLiveness", "GET", "/api/health/live")
        call("GetReadiness", "GET", "/api/health/ready")
        call("GetMe", "GET", "/api/me")
        call("GetStatus", "GET", "/api/status")
        call("ListProjects", "GET", "/api/projects")
        call("CreateProject", "POST", "/api/projects", json={"name": "second"})
        call("GetProject", "GET", f"/api/projects/{project}")
        data = b"# Tides\n\nHigh water at noon.\n"
        grant = call(
            "CreateUpload",
            "POST",
            "/api/uploads",
            json={"project_id": project, "filename": "tides.md", "size": len(data)},
        ).json()
        _send_bytes(api, grant, data)
        sync = {
            "path": "notes/tides.md",
            "sha256": hashlib.sha256(data).hexdigest(),
            "size": len(data),
            "mtime_ns": 1,
        }
        synced = call(
            "CreateDocument",
            "POST",
            "/api/documents",
            json={"project_id": project, "upload_id": grant["upload_id"], "sync": sync},
        ).json()
        call(
            "FollowSyncedFile",
            "PUT",
            f"/api/documents/{synced['id']}/sync",
            json={"path": "moved/tides.md", "name": "tides.md"},
        )
        again = api.post(
            "/api/uploads",
            json={
                "project_id": project,
                "filename": "tides.md",
                "size": len(data) + 1,
                "replaces": synced["id"],
            },
        ).json()
        _send_bytes(api, again, data + b"\n")
        call(
            "ReplaceDocumentOriginal",
            "POST",
            f"/api/documents/{synced['id']}/original",
            json={"upload_id": again["upload_id"]},
        )
        call("ListDocuments", "GET", f"/api/projects/{project}/documents")
        call("GetDocument", "GET", f"/api/documents/{document}")
        call("GetDocumentText", "GET", f"/api/documents/{document}/text", params={"pages": "1"})
        call("GetDocumentFile", "GET", f"/api/documents/{document}/file")
        call("GetPageImage", "GET", f"/api/documents/{world.pdf_id}/pages/1/image")
        call("SearchProject", "POST", f"/api/projects/{project}/search", json={"query": "ferry"})
        call("FindMentions", "GET", f"/api/projects/{project}/mentions", params={"terms": "ferry"})
        imported = call(
            "ImportDocument",
            "POST",
            f"/api/projects/{project}/imports",
            json={"url": "http://127.0.0.1:9/charts.pdf"},
        ).json()
        call("ListDocumentRequests", "GET", f"/api/projects/{project}/requests")
        call(
            "ApproveDocumentRequest",
            "POST",
            f"/api/projects/{project}/requests/{world.request_id}/approve",
            json={"url": "http://127.0.0.1:9/tide-tables.pdf"},
        )
        call("ReextractDocument", "POST", f"/api/documents/{document}/reextract")
        call("DeleteDocument", "DELETE", f"/api/documents/{imported['id']}")
    with httpx.Client(base_url=world.url, timeout=30) as browser:
        answers["CreateSession"] = browser.post("/api/session", json={"token": world.token})
        answers["GetSession"] = browser.get("/api/session")
        answers["DeleteSession"] = browser.delete("/api/session")

    assert set(answers) == {op.operation_id for op in OPERATIONS}, "call every operation"
    problems = [p for op, response in answers.items() for p in check_answer(models, op, response)]
    assert not problems, "\n".join(problems)


def _fill(path: str) -> str:
    for name in ("project_id", "document_id", "request_id"):
        path = path.replace("{" + name + "}", str(uuid.uuid4()))
    return path


def test_every_refusal_is_documented_for_its_operation(world: World, models: ModuleType) -> None:
    """No token, a read token, ids that do not exist: each answer is one its operation lists."""
    problems: list[str] = []
    refusals: dict[str, int] = {}
    for operation in OPERATIONS:
        path = _fill(operation.path)
        params = {"terms": "ferry"} if "terms" in operation.query_params else None
        body = {} if operation.has_body else None
        for token in (None, world.read_token, world.token):
            headers = {"Authorization": f"Bearer {token}"} if token else {}
            response = httpx.request(
                operation.method, world.url + path, params=params, json=body, headers=headers
            )
            if response.status_code >= 400:
                code = response.json()["code"]
                refusals[code] = refusals.get(code, 0) + 1
            problems += check_answer(models, operation.operation_id, response)
    assert not problems, "\n".join(problems)
    assert {"not_authenticated", "token_read_only", "invalid_request"} <= refusals.keys()
