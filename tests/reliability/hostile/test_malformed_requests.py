"""Promise 2, by hand: malformed, oversized and mistyped requests get a JSON 4xx, fast.

Each test sends the bytes a broken or hostile client would, over real HTTP to
the app under uvicorn, and checks the answer is the error envelope with a
stable code — never a 5xx, never a hang (pytest-timeout stops a stuck test).
"""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.reliability.hostile.conftest import Target

pytestmark = pytest.mark.timeout(60)

MB = 1024 * 1024


def assert_envelope(response: httpx.Response, status: int, code: str | None = None) -> None:
    assert response.status_code == status, response.text[:500]
    assert response.headers["content-type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert body["status"] == status
    assert body["message"]
    if code is not None:
        assert body["code"] == code, body


@pytest.mark.parametrize(
    "raw",
    [b"{", b'{"name": }', b"{'name': 'x'}", b"\xff\xfe\xfd", b"", b"[]", b'"name"', b"null"],
    ids=[
        "truncated",
        "missing-value",
        "single-quotes",
        "not-utf8",
        "empty",
        "array",
        "string",
        "null",
    ],
)
def test_a_body_that_is_not_a_json_object_is_a_400(target: Target, raw: bytes) -> None:
    with target.client() as client:
        response = client.post(
            "/api/projects", content=raw, headers={"Content-Type": "application/json"}
        )
    assert_envelope(response, 400)


def test_deeply_nested_json_is_a_400_not_a_crash(target: Target) -> None:
    nested = b"[" * 100_000 + b"]" * 100_000
    with target.client() as client:
        response = client.post(
            f"/api/projects/{target.project_id}/search",
            content=b'{"query": "survey", "document_ids": ' + nested + b"}",
            headers={"Content-Type": "application/json"},
        )
    assert_envelope(response, 400)


def test_a_20_mb_body_is_refused_with_a_json_413(target: Target) -> None:
    huge = b'{"name": "' + b"x" * (20 * MB) + b'"}'
    with target.client() as client:
        response = client.post(
            "/api/projects", content=huge, headers={"Content-Type": "application/json"}
        )
    assert_envelope(response, 413, "request_too_large")


def test_a_huge_search_query_is_a_400(target: Target) -> None:
    with target.client() as client:
        response = client.post(
            f"/api/projects/{target.project_id}/search", json={"query": "survey " * 200_000}
        )
    assert_envelope(response, 400)


@pytest.mark.parametrize(
    ("content_type", "raw"),
    [
        ("text/plain", b"name=plain-text-project"),
        ("application/x-www-form-urlencoded", b"name=form-project"),
        ("multipart/form-data; boundary=xyz", b"--xyz\r\nnot a part\r\n--xyz--\r\n"),
        ("application/xml", b"<project><name>xml</name></project>"),
    ],
    ids=["text", "form", "multipart", "xml"],
)
@pytest.mark.parametrize(
    "path", ["/api/projects", "/api/uploads", "/api/documents", "search"], ids=str
)
def test_a_non_json_body_to_a_json_endpoint_is_a_json_4xx(
    target: Target, content_type: str, raw: bytes, path: str
) -> None:
    url = f"/api/projects/{target.project_id}/search" if path == "search" else path
    with target.client() as client:
        response = client.post(url, content=raw, headers={"Content-Type": content_type})
    assert 400 <= response.status_code < 500, response.text[:500]
    assert_envelope(response, response.status_code)


@pytest.mark.parametrize(
    "path",
    [
        "/api/documents/not-a-uuid",
        "/api/documents/%00",
        "/api/documents/..%2f..%2fetc%2fpasswd",
        "/api/projects/" + "9" * 5000,
        "/api/projects/%E2%80%AE/documents",
    ],
    ids=["not-uuid", "nul", "traversal", "5000-digits", "bidi"],
)
def test_a_garbage_id_in_the_path_is_a_json_4xx(target: Target, path: str) -> None:
    with target.client() as client:
        response = client.get(path)
    assert 400 <= response.status_code < 500, response.text[:500]
    assert_envelope(response, response.status_code)


@pytest.mark.parametrize(
    "pages", ["0", "-1", "3-1", "1-99999999999999999999", "\x00", "a-b", "1,2"]
)
def test_a_garbage_page_range_is_a_json_4xx(target: Target, pages: str) -> None:
    with target.client() as client:
        response = client.get(f"/api/documents/{target.document_id}/text", params={"pages": pages})
    assert 400 <= response.status_code < 500, response.text[:500]
    assert_envelope(response, response.status_code)


@pytest.mark.parametrize(
    "header",
    [
        "Bearer",
        "Basic dXNlcjpwYXNz",
        "Bearer " + "x" * 10_000,
        "Bearer \u202etoken",
        "Bearer a\x01b",
    ],
    ids=["no-token", "basic", "10k-token", "bidi", "control"],
)
def test_a_malformed_authorization_header_is_a_json_401(target: Target, header: str) -> None:
    with httpx.Client(base_url=target.url, timeout=30) as client:
        response = client.get("/api/projects", headers={b"Authorization": header.encode("utf-8")})
    assert_envelope(response, 401, "not_authenticated")
