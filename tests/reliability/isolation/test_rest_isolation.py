"""Promise 1 over REST: bob's token never reaches alice's projects, documents or uploads.

The matrix is every operation in the app's OpenAPI schema. Operations naming an
id (in the path or the body) are called with bob's token and alice's ids and
must be refused with 403/404 in the JSON envelope; every response, refused or
not, must be free of alice's names, text and ids (bar those bob sent).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest
from litestar.testing import AsyncTestClient

from service.app import create_app
from tests.integration.documents.conftest import bearer
from tests.reliability.isolation.conftest import (
    ALICE_DOCUMENT,
    ALICE_PHRASE,
    World,
    assert_no_alice_data,
)
from tests.reliability.isolation.operations import OPERATIONS, Operation

pytestmark = pytest.mark.anyio

#: Which of alice's ids fills each path parameter.
ALICE_PATH_IDS: dict[str, Callable[[World], str]] = {
    "project_id": lambda world: world.alice_project_id,
    "document_id": lambda world: world.alice_document_id,
    "request_id": lambda world: world.alice_request_id,
    "page": lambda world: "1",
}

#: Values for query parameters ("survey" is a word of alice's document, so a leak would show).
QUERY_VALUES = {"terms": "survey", "match": "any", "pages": "1"}

BodyBuilder = Callable[[World, str], list[dict[str, Any]]]

#: Request bodies by operation id, given the world and an upload id of alice's.
BODIES: dict[str, BodyBuilder] = {
    "SearchProject": lambda world, _: [{"query": "survey of the northern coast"}],
    "CreateUpload": lambda world, _: [
        {
            "project_id": world.alice_project_id,
            "filename": "bob.pdf",
            "size": 10,
            "content_type": "application/pdf",
        },
        {  # a new original for alice's document, asked for in bob's own project
            "project_id": world.bob_project_id,
            "filename": ALICE_DOCUMENT,
            "size": 10,
            "content_type": "application/pdf",
            "replaces": world.alice_document_id,
        },
    ],
    "ReplaceDocumentOriginal": lambda world, upload_id: [{"upload_id": upload_id}],
    "FollowSyncedFile": lambda world, _: [{"path": "moved/bob.md", "name": "bob.md"}],
    "CreateDocument": lambda world, upload_id: [
        {"project_id": world.alice_project_id, "upload_id": upload_id},
        {"project_id": world.bob_project_id, "upload_id": upload_id},
    ],
    "CreateProject": lambda world, _: [{"name": "bob-second-project"}],
    "ImportDocument": lambda world, _: [{"url": "https://192.0.2.1/bob.pdf"}],
    "ApproveDocumentRequest": lambda world, _: [{"url": "https://192.0.2.1/bob.pdf"}],
    "CreateSession": lambda world, _: [{"token": world.bob_token}],
}


class Call(NamedTuple):
    operation: Operation
    url: str
    params: dict[str, str]
    body: dict[str, Any] | None

    @property
    def sent(self) -> str:
        return f"{self.url} {self.params} {json.dumps(self.body)}"

    def names_alice(self, world: World) -> bool:
        return any(alice_id in self.sent for alice_id in world.alice_ids())

    def with_ids_replaced(self, ids: list[str]) -> Call:
        """The same call naming ids that never existed."""
        sent = json.dumps([self.url, self.params, self.body])
        for old in ids:
            sent = sent.replace(old, str(uuid.uuid4()))
        url, params, body = json.loads(sent)
        return Call(self.operation, url, params, body)

    def __str__(self) -> str:
        return f"{self.operation.method} {self.url} body={self.body}"


def unknown_parts(operation: Operation) -> list[str]:
    """What the matrix would not know how to fill for this operation."""
    unknown = [f"path parameter {p!r}" for p in operation.path_params if p not in ALICE_PATH_IDS]
    unknown += [
        f"query parameter {name!r}"
        for name, required in operation.query_params.items()
        if (required or name.endswith(("_id", "_ids"))) and name not in QUERY_VALUES
    ]
    if operation.has_body and operation.operation_id not in BODIES:
        unknown.append("request body")
    return unknown


def calls(world: World, alice_upload_id: str) -> list[Call]:
    planned = []
    for operation in OPERATIONS:
        url = operation.path
        for name in operation.path_params:
            url = url.replace("{" + name + "}", ALICE_PATH_IDS[name](world))
        params = {
            name: QUERY_VALUES[name] for name in operation.query_params if name in QUERY_VALUES
        }
        bodies: list[dict[str, Any] | None] = (
            list(BODIES[operation.operation_id](world, alice_upload_id))
            if operation.has_body
            else [None]
        )
        planned += [Call(operation, url, params, body) for body in bodies]
    return planned


def test_every_rest_operation_is_known_to_the_isolation_matrix() -> None:
    gaps = {op.operation_id: unknown_parts(op) for op in OPERATIONS if unknown_parts(op)}
    assert not gaps, (
        f"teach the isolation matrix how to call these operations with alice's ids: {gaps}"
    )


def test_the_matrix_covers_the_routes_that_take_ids() -> None:
    with_ids = {op.operation_id for op in OPERATIONS if op.path_params}
    assert {"GetDocument", "DeleteDocument", "ListDocuments", "SearchProject"} <= with_ids


async def _alice_upload_id(client: Any, world: World) -> str:
    granted = await client.post(
        "/api/uploads",
        json={
            "project_id": world.alice_project_id,
            "filename": "alice-draft.pdf",
            "size": 10,
            "content_type": "application/pdf",
        },
        headers=bearer(world.alice_token),
    )
    assert granted.status_code == 201, granted.text
    upload_id: str = granted.json()["upload_id"]
    return upload_id


async def _send(client: Any, call: Call, headers: dict[str, str]) -> Any:
    return await client.request(
        call.operation.method,
        call.url,
        params=call.params,
        json=call.body,
        headers=headers,
    )


def _refusal_problems(response: Any, ghost: Any) -> list[str]:
    """Problems with how bob was refused; ``ghost`` answered the same call for unknown ids.

    An idempotent operation (DELETE) may answer 2xx, but only exactly as it
    answers for ids that never existed, so the answer reveals nothing.
    """
    if 200 <= ghost.status_code < 300:
        if (response.status_code, response.content) != (ghost.status_code, ghost.content):
            return [
                f"answered {response.status_code} unlike for unknown ids: {response.text[:300]}"
            ]
        return []
    if response.status_code not in (403, 404):
        return [f"answered {response.status_code}, not 403/404: {response.text[:300]}"]
    try:
        body = response.json()
    except ValueError:
        return [f"answered {response.status_code} without a JSON body: {response.text[:300]}"]
    if (
        body.get("status") != response.status_code
        or not body.get("code")
        or not body.get("message")
    ):
        return [f"the refusal is not the JSON envelope: {body}"]
    return []


async def test_bob_cannot_reach_alice_through_any_rest_operation(world: World) -> None:
    async with AsyncTestClient(app=create_app(world.settings)) as client:
        upload_id = await _alice_upload_id(client, world)
        planned = calls(world, upload_id)
        problems: list[str] = []
        refused = 0
        for call in planned:
            response = await _send(client, call, bearer(world.bob_token))
            if call.names_alice(world) or upload_id in call.sent:
                refused += 1
                ghost_call = call.with_ids_replaced([*world.alice_ids(), upload_id])
                ghost = await _send(client, ghost_call, bearer(world.bob_token))
                problems += [f"{call}: {p}" for p in _refusal_problems(response, ghost)]
            elif response.status_code >= 500:
                problems.append(f"{call}: answered {response.status_code}")
            try:
                assert_no_alice_data(world, response.text, asked_with=call.sent)
            except AssertionError as leak:
                problems.append(f"{call}: {leak}")

        alice = bearer(world.alice_token)
        document = await client.get(f"/api/documents/{world.alice_document_id}", headers=alice)
        text = await client.get(f"/api/documents/{world.alice_document_id}/text", headers=alice)
        listed = await client.get(
            f"/api/projects/{world.alice_project_id}/documents", headers=alice
        )

    assert refused >= 12, f"only {refused} calls named alice's ids"
    assert not problems, "\n".join(problems)
    assert document.status_code == 200, "bob's DELETE removed alice's document"
    assert document.json()["status"] == "ready"
    assert document.json()["name"] == ALICE_DOCUMENT
    assert ALICE_PHRASE in text.json()["markdown"]
    assert [d["id"] for d in listed.json()["documents"]] == [world.alice_document_id]


async def test_searching_bobs_project_for_alices_document_id_finds_nothing(world: World) -> None:
    body = {"query": "survey northern coast", "document_ids": [world.alice_document_id]}
    async with AsyncTestClient(app=create_app(world.settings)) as client:
        response = await client.post(
            f"/api/projects/{world.bob_project_id}/search",
            json=body,
            headers=bearer(world.bob_token),
        )
    assert response.status_code in (200, 404), response.text
    if response.status_code == 200:
        assert response.json()["results"] == []
    assert_no_alice_data(world, response.text, asked_with=json.dumps(body))


async def test_bobs_panel_session_cannot_list_alices_documents(world: World) -> None:
    async with AsyncTestClient(app=create_app(world.settings)) as client:
        signed_in = await client.post("/api/session", json={"token": world.bob_token})
        assert signed_in.status_code == 201, signed_in.text
        own = await client.get(f"/api/projects/{world.bob_project_id}/documents")
        theirs = await client.get(f"/api/projects/{world.alice_project_id}/documents")

    assert own.status_code == 200, "the session cookie did not sign bob in"
    assert theirs.status_code == 404, theirs.text
    assert theirs.json()["code"] == "project_not_found"
    assert_no_alice_data(world, theirs.text, asked_with=world.alice_project_id)
