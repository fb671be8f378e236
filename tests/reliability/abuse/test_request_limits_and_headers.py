"""Promise 6: oversized request bodies are refused with the JSON envelope, and the panel
is served with its security headers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.documents.conftest import bearer, new_user

pytestmark = pytest.mark.anyio

#: Litestar's default request_max_body_size (the app does not change it; only the local
#: blob store's upload route lifts it, to enforce each grant's own size instead).
BODY_LIMIT = 10_000_000


@pytest.mark.parametrize("path", ["/api/projects", "/api/session"])
async def test_a_body_over_the_limit_is_a_json_413(client: Any, db_url: str, path: str) -> None:
    alice = await new_user(db_url, "alice")
    oversized = b'{"name": "' + b"x" * BODY_LIMIT + b'"}'

    response = await client.post(
        path,
        content=oversized,
        headers={**bearer(alice.token), "Content-Type": "application/json"},
    )

    assert response.status_code == 413, response.text[:200]
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert body["status"] == 413
    assert body["code"] == "request_too_large"
    assert body["message"]


async def test_a_body_just_under_the_limit_is_judged_on_its_content(
    client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    almost = b'{"name": "' + b"x" * (BODY_LIMIT - 100) + b'"}'

    response = await client.post(
        "/api/projects",
        content=almost,
        headers={**bearer(alice.token), "Content-Type": "application/json"},
    )

    assert response.status_code < 500, response.text[:200]
    assert response.status_code != 413


@pytest.mark.parametrize("path", ["/", "/static/panel/panel.css"])
async def test_the_panel_carries_its_security_headers(client: Any, path: str) -> None:
    response = await client.get(path)

    assert response.status_code == 200, path
    csp = response.headers["content-security-policy"]
    assert "default-src 'self'" in csp
    assert "script-src 'self'" in csp
    assert "frame-ancestors 'none'" in csp
    assert "object-src 'none'" in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["referrer-policy"] == "no-referrer"
