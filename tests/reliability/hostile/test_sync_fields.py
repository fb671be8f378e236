"""What ``shortlist sync`` tells the service of a file is hostile too (#24): a path holding NUL,
a newline, ``..`` or a leading ``/``, or a size or mtime past what the database holds, is a
``400 invalid_request`` naming the field, through each of the three doors that take it
(``POST /api/documents`` and ``POST /api/documents/{id}/original`` with ``sync``, ``PUT
/api/documents/{id}/sync``), never a 500 and never stored."""

from __future__ import annotations

import unicodedata
import uuid
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest

from tests.reliability.hostile.conftest import Target
from tests.reliability.hostile.test_malformed_requests import assert_envelope

pytestmark = pytest.mark.timeout(60)

DATA = b"# Synced\n\nok\n"
SHA = "0" * 64

BAD_PATHS = {
    "nul": "notes\x00.md",
    "newline": "notes\n.md",
    "parent": "../../../etc/passwd",
    "parent-inside": "a/../notes.md",
    "absolute": "/abs/path.md",
    "backslash": "a\\notes.md",
    "empty-part": "a//notes.md",
    "bidi-override": "report\u202edm.md",
}
BAD_NUMBERS = {"size": 2**70, "mtime_ns": 2**70, "negative-size": -1}


def _sync(path: str = "notes.md", **fields: int) -> dict[str, Any]:
    return {"path": path, "sha256": SHA, "size": len(DATA), "mtime_ns": 1, **fields}


def _uploaded(client: httpx.Client, target: Target, name: str, **grant: str) -> str:
    granted = client.post(
        "/api/uploads",
        json={
            "project_id": target.project_id,
            "filename": name,
            "size": len(DATA),
            "content_type": "text/markdown",
            **grant,
        },
    )
    assert granted.status_code == 201, granted.text
    body: dict[str, Any] = granted.json()
    url = urlsplit(body["url"])
    sent = client.put(f"{url.path}?{url.query}", content=DATA, headers=body["headers"])
    assert sent.status_code == 201, sent.text
    return str(body["upload_id"])


def _create(client: httpx.Client, target: Target, sync: dict[str, Any]) -> httpx.Response:
    upload_id = _uploaded(client, target, f"{uuid.uuid4().hex}.md")
    return client.post(
        "/api/documents",
        json={"project_id": target.project_id, "upload_id": upload_id, "sync": sync},
    )


def _synced_document(client: httpx.Client, target: Target) -> dict[str, Any]:
    created = _create(client, target, _sync(f"{uuid.uuid4().hex}/notes.md"))
    assert created.status_code == 201, created.text
    document: dict[str, Any] = client.get(f"/api/documents/{created.json()['id']}").json()
    return document


def _names_the_field(response: httpx.Response, field: str) -> None:
    assert_envelope(response, 400, "invalid_request")
    assert field in response.text, response.text


def _nothing_stored_at(client: httpx.Client, target: Target, path: str) -> None:
    listed = client.get(f"/api/projects/{target.project_id}/documents").json()
    assert path not in [(d["sync"] or {}).get("path") for d in listed["documents"]]


@pytest.mark.parametrize("path", BAD_PATHS.values(), ids=BAD_PATHS.keys())
def test_a_bad_sync_path_of_a_new_document_is_invalid_request(target: Target, path: str) -> None:
    with target.client() as client:
        response = _create(client, target, _sync(path))
        _names_the_field(response, "path")
        _nothing_stored_at(client, target, path)


@pytest.mark.parametrize("path", BAD_PATHS.values(), ids=BAD_PATHS.keys())
def test_a_bad_path_a_synced_document_follows_is_invalid_request(target: Target, path: str) -> None:
    with target.client() as client:
        document = _synced_document(client, target)
        response = client.put(
            f"/api/documents/{document['id']}/sync",
            json={"path": path, "name": document["name"], "size": 1, "mtime_ns": 1},
        )
        _names_the_field(response, "path")
        kept = client.get(f"/api/documents/{document['id']}").json()
    assert kept["sync"]["path"] == document["sync"]["path"]


@pytest.mark.parametrize("path", BAD_PATHS.values(), ids=BAD_PATHS.keys())
def test_a_bad_sync_path_with_a_new_original_is_invalid_request(target: Target, path: str) -> None:
    with target.client() as client:
        document = _synced_document(client, target)
        upload_id = _uploaded(client, target, document["name"], replaces=document["id"])
        response = client.post(
            f"/api/documents/{document['id']}/original",
            json={"upload_id": upload_id, "sync": _sync(path)},
        )
        _names_the_field(response, "path")
        kept = client.get(f"/api/documents/{document['id']}").json()
    assert kept["sync"]["path"] == document["sync"]["path"]


@pytest.mark.parametrize(
    ("field", "value"),
    [("size", 2**70), ("mtime_ns", 2**70), ("size", -1), ("mtime_ns", 2**63)],
    ids=["size-2**70", "mtime-2**70", "negative-size", "mtime-2**63"],
)
def test_a_size_or_mtime_past_bigint_is_invalid_request_at_every_door(
    target: Target, field: str, value: int
) -> None:
    with target.client() as client:
        _names_the_field(_create(client, target, _sync(**{field: value})), field)
        document = _synced_document(client, target)
        followed = client.put(
            f"/api/documents/{document['id']}/sync",
            json={"path": "x.md", "name": document["name"], field: value},
        )
        _names_the_field(followed, field)
        upload_id = _uploaded(client, target, document["name"], replaces=document["id"])
        replaced = client.post(
            f"/api/documents/{document['id']}/original",
            json={"upload_id": upload_id, "sync": _sync(**{field: value})},
        )
        _names_the_field(replaced, field)


def test_the_largest_bigint_and_a_decomposed_path_are_kept_in_normal_form(
    target: Target,
) -> None:
    decomposed = f"{uuid.uuid4().hex}/cafe\u0301.md"
    with target.client() as client:
        created = _create(client, target, _sync(decomposed, size=2**63 - 1, mtime_ns=2**63 - 1))
        assert created.status_code == 201, created.text
        sync = client.get(f"/api/documents/{created.json()['id']}").json()["sync"]
    assert created.json()["sync"] == sync  # recorded in the insert's own statement
    assert sync["path"] == unicodedata.normalize("NFC", decomposed)
    assert (sync["size"], sync["mtime_ns"]) == (2**63 - 1, 2**63 - 1)
