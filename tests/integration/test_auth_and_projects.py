from __future__ import annotations

from typing import Any

import psycopg
import pytest

from service.services import users
from service.settings import Settings

pytestmark = pytest.mark.anyio


async def _new_user(db_url: str, name: str) -> users.NewUser:
    from psycopg.rows import dict_row

    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        return await users.create_user(conn, name)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["status"] == status
    assert body["code"] == code
    assert body["message"]


async def test_health_needs_no_token_and_reports_database_blob_store_and_reranker(
    client: Any,
) -> None:
    response = await client.get("/api/health")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["database"] == {"ok": True, "detail": "connected"}
    assert body["blob_store"] == {"ok": True, "detail": "local"}
    assert body["reranker"] == {"ok": True, "kind": "none", "detail": "none"}


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer"},
        {"Authorization": "Basic dXNlcjpwYXNz"},
        {"Authorization": "Bearer not-a-token"},
        {"Authorization": "Bearer sl_00000000_" + "x" * 43},
    ],
    ids=["missing", "empty", "wrong-scheme", "malformed", "unknown"],
)
async def test_api_routes_refuse_requests_without_a_live_token(
    client: Any, headers: dict[str, str]
) -> None:
    response = await client.get("/api/projects", headers=headers)

    assert_error(response, 401, "not_authenticated")
    assert response.headers["www-authenticate"].startswith("Bearer")


async def test_a_revoked_token_is_refused(client: Any, db_url: str) -> None:
    created = await _new_user(db_url, "alice")
    assert (await client.get("/api/projects", headers=bearer(created.token))).status_code == 200

    from psycopg.rows import dict_row

    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        await users.revoke_token(conn, created.token)

    assert_error(
        await client.get("/api/projects", headers=bearer(created.token)), 401, "not_authenticated"
    )


async def test_tokens_are_stored_only_as_digests(db_url: str) -> None:
    created = await _new_user(db_url, "alice")

    with psycopg.connect(db_url) as conn:
        rows = conn.execute("SELECT token_hash, prefix FROM api_tokens").fetchall()
    assert len(rows) == 1
    stored_hash, prefix = rows[0]
    assert created.token.encode() not in bytes(stored_hash)
    assert len(bytes(stored_hash)) == 32
    assert created.token.startswith(f"sl_{prefix}_")


async def test_a_new_user_gets_a_default_project(client: Any, db_url: str) -> None:
    created = await _new_user(db_url, "alice")

    body = (await client.get("/api/projects", headers=bearer(created.token))).json()

    assert [p["name"] for p in body["projects"]] == ["default"]
    assert body["projects"][0]["id"] == str(created.project.id)


async def test_project_names_are_unique_per_user_ignoring_case(client: Any, db_url: str) -> None:
    alice = await _new_user(db_url, "alice")
    bob = await _new_user(db_url, "bob")

    created = await client.post(
        "/api/projects", json={"name": "Papers"}, headers=bearer(alice.token)
    )
    again = await client.post(
        "/api/projects", json={"name": " papers "}, headers=bearer(alice.token)
    )
    bobs = await client.post("/api/projects", json={"name": "Papers"}, headers=bearer(bob.token))

    assert created.status_code == 201
    assert_error(again, 409, "project_exists")
    assert bobs.status_code == 201


async def test_a_user_cannot_see_another_users_project(client: Any, db_url: str) -> None:
    alice = await _new_user(db_url, "alice")
    bob = await _new_user(db_url, "bob")

    response = await client.get(f"/api/projects/{alice.project.id}", headers=bearer(bob.token))
    listing = (await client.get("/api/projects", headers=bearer(bob.token))).json()

    assert_error(response, 404, "project_not_found")
    assert str(alice.project.id) not in response.text
    assert [p["id"] for p in listing["projects"]] == [str(bob.project.id)]


async def test_malformed_json_is_a_json_400(client: Any, db_url: str) -> None:
    alice = await _new_user(db_url, "alice")

    response = await client.post(
        "/api/projects",
        content=b"{not json",
        headers={**bearer(alice.token), "Content-Type": "application/json"},
    )

    assert_error(response, 400, "invalid_request")


async def test_unknown_routes_answer_with_the_json_envelope(client: Any) -> None:
    assert_error(await client.get("/api/no-such-thing"), 404, "not_found")


def test_settings_read_standard_names_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://example/db")
    monkeypatch.setenv("COHERE_API_KEY", "secret-key")
    monkeypatch.setenv("SHORTLIST_SERVER__PORT", "9123")

    settings = Settings()

    assert settings.database_url is not None
    assert settings.database_url.get_secret_value() == "postgresql://example/db"
    assert settings.reranker_kind == "cohere"
    assert settings.server.port == 9123
    assert settings.masked()["cohere_api_key"] == "********"
