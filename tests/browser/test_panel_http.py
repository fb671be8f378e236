"""The panel over HTTP, without a browser: page headers, sign-in cookies, CSRF."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient
from psycopg.rows import dict_row

from service.app import create_app
from service.panel.security_headers import content_security_policy
from service.services import users
from tests.conftest import make_settings

pytestmark = pytest.mark.anyio


def assert_error(response: Any, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert (body["status"], body["code"]) == (status, code)
    assert body["message"]


async def sign_in(client: Any, token: str) -> dict[str, Any]:
    response = await client.post("/api/session", json={"token": token})
    assert response.status_code == 201, response.text
    body: dict[str, Any] = response.json()
    return body


def set_cookie_attributes(response: Any) -> dict[str, str]:
    """The attributes of the response's one Set-Cookie header, keys lower-cased."""
    (header,) = response.headers.get_list("set-cookie")
    name_value, *attributes = [part.strip() for part in header.split(";")]
    parsed = {"name": name_value.split("=", 1)[0], "value": name_value.split("=", 1)[1]}
    for attribute in attributes:
        key, _, value = attribute.partition("=")
        parsed[key.lower()] = value or "true"
    return parsed


async def test_signing_in_sets_an_httponly_samesite_strict_cookie_without_the_token(
    client: Any, alice: users.NewUser
) -> None:
    response = await client.post("/api/session", json={"token": alice.token})

    assert response.status_code == 201
    cookie = set_cookie_attributes(response)
    assert cookie["name"] == "shortlist_session"
    assert cookie["httponly"] == "true"
    assert cookie["samesite"].lower() == "strict"
    assert cookie["path"] == "/api"
    assert "secure" not in cookie  # plain http here
    assert alice.token not in response.headers["set-cookie"]
    body = response.json()
    assert body["user"]["name"] == "alice"
    assert body["csrf_token"]
    assert alice.token not in response.text


async def test_the_cookie_is_secure_when_the_service_is_public_over_https(
    db_url: str, tmp_path: Path, alice: users.NewUser
) -> None:
    settings = make_settings(db_url, tmp_path, server={"public_url": "https://shortlist.example"})
    async with AsyncTestClient(app=create_app(settings)) as client:
        response = await client.post("/api/session", json={"token": alice.token})

    assert set_cookie_attributes(response)["secure"] == "true"


async def test_signing_in_with_an_unknown_token_is_refused(client: Any) -> None:
    response = await client.post("/api/session", json={"token": "sl_00000000_" + "x" * 43})

    assert_error(response, 401, "not_authenticated")
    assert not response.headers.get_list("set-cookie")


async def test_a_sign_in_sent_by_another_site_is_refused(client: Any, alice: users.NewUser) -> None:
    response = await client.post(
        "/api/session", json={"token": alice.token}, headers={"Sec-Fetch-Site": "cross-site"}
    )

    assert_error(response, 403, "csrf_failed")


async def test_the_session_cookie_authenticates_reads(client: Any, alice: users.NewUser) -> None:
    await sign_in(client, alice.token)

    projects = await client.get("/api/projects")
    session = await client.get("/api/session")

    assert projects.status_code == 200
    assert [p["name"] for p in projects.json()["projects"]] == ["default"]
    assert session.json()["user"]["name"] == "alice"


async def test_a_cookie_authenticated_write_without_the_csrf_header_is_refused(
    client: Any, db_url: str, alice: users.NewUser
) -> None:
    session = await sign_in(client, alice.token)

    missing = await client.post("/api/projects", json={"name": "no header"})
    wrong = await client.post(
        "/api/projects", json={"name": "wrong header"}, headers={"X-CSRF-Token": "forged"}
    )
    right = await client.post(
        "/api/projects",
        json={"name": "with header"},
        headers={"X-CSRF-Token": session["csrf_token"]},
    )

    assert_error(missing, 403, "csrf_failed")
    assert_error(wrong, 403, "csrf_failed")
    assert right.status_code == 201, right.text
    with psycopg.connect(db_url) as conn:
        names = {row[0] for row in conn.execute("SELECT name FROM projects").fetchall()}
    assert names == {"default", "with header"}


async def test_the_csrf_token_of_one_session_does_not_pass_for_another(
    client: Any, alice: users.NewUser
) -> None:
    first = await sign_in(client, alice.token)
    await sign_in(client, alice.token)

    response = await client.post(
        "/api/projects", json={"name": "stale"}, headers={"X-CSRF-Token": first["csrf_token"]}
    )

    assert_error(response, 403, "csrf_failed")


async def test_bearer_requests_need_no_csrf_header_even_beside_a_session_cookie(
    client: Any, alice: users.NewUser
) -> None:
    await sign_in(client, alice.token)

    response = await client.post(
        "/api/projects",
        json={"name": "by bearer"},
        headers={"Authorization": f"Bearer {alice.token}"},
    )
    session = await client.get("/api/session", headers={"Authorization": f"Bearer {alice.token}"})

    assert response.status_code == 201, response.text
    assert session.json()["csrf_token"] is None


async def test_a_forged_session_cookie_is_not_a_session(client: Any, alice: users.NewUser) -> None:
    await sign_in(client, alice.token)
    value = client.cookies["shortlist_session"]
    client.cookies.clear()
    client.cookies.set("shortlist_session", value[:-4] + "AAAA", path="/api")

    assert_error(await client.get("/api/projects"), 401, "not_authenticated")


async def test_signing_out_clears_the_cookie(client: Any, alice: users.NewUser) -> None:
    await sign_in(client, alice.token)

    response = await client.delete("/api/session")

    assert response.status_code == 204
    cookie = set_cookie_attributes(response)
    assert (cookie["name"], cookie["value"].strip('"'), cookie["max-age"]) == (
        "shortlist_session",
        "",
        "0",
    )
    assert_error(await client.get("/api/session"), 401, "not_authenticated")


async def test_revoking_the_token_ends_its_sessions(
    client: Any, db_url: str, alice: users.NewUser
) -> None:
    await sign_in(client, alice.token)
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        await users.revoke_token(conn, alice.token)

    assert_error(await client.get("/api/projects"), 401, "not_authenticated")


async def test_the_panel_page_carries_a_strict_csp_and_security_headers(client: Any) -> None:
    response = await client.get("/")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    csp = dict(
        directive.strip().split(" ", 1)
        for directive in response.headers["content-security-policy"].split(";")
    )
    assert csp["default-src"] == "'self'"
    assert csp["script-src"] == "'self'"
    assert csp["style-src"] == "'self'"
    assert csp["img-src"] == "'self' data:"
    assert csp["connect-src"].startswith("'self'")
    assert csp["frame-ancestors"] == "'none'"
    assert response.headers["x-content-type-options"] == "nosniff"
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["referrer-policy"] == "no-referrer"


async def test_the_panel_page_has_no_inline_script_or_style(client: Any) -> None:
    html = (await client.get("/")).text

    scripts = re.findall(r"<script\b([^>]*)>(.*?)</script>", html, flags=re.S)
    assert scripts
    assert all('src="' in attributes and not body.strip() for attributes, body in scripts)
    assert "<style" not in html
    assert " style=" not in html
    assert not re.search(r"\son[a-z]+=", html)


async def test_every_script_the_page_loads_is_served_as_javascript_with_the_headers(
    client: Any,
) -> None:
    html = (await client.get("/")).text
    (main_src,) = re.findall(r'<script type="module" src="([^"]+)"', html)
    main = await client.get(main_src)
    imported = re.findall(r'from "\./([a-z]+\.js)"', main.text)

    assert imported
    for src in [main_src, *(main_src.rsplit("/", 1)[0] + "/" + name for name in imported)]:
        response = await client.get(src)
        assert response.status_code == 200, src
        assert "javascript" in response.headers["content-type"], src
        assert response.headers["x-content-type-options"] == "nosniff"
        assert "content-security-policy" in response.headers


async def test_the_panel_page_is_served_without_a_token(client: Any) -> None:
    page = await client.get("/")
    stylesheet = await client.get("/static/panel/panel.css")

    assert page.status_code == 200
    assert stylesheet.status_code == 200
    assert stylesheet.headers["content-type"].startswith("text/css")


def test_connect_src_names_the_s3_endpoint_browsers_upload_to(tmp_path: Path) -> None:
    settings = make_settings(
        "postgresql://unused/db",
        tmp_path,
        storage={
            "s3_bucket": "originals",
            "s3_endpoint_url": "http://seaweed.internal:8333",
            "s3_public_endpoint_url": "https://files.example.com/",
        },
    )

    csp = content_security_policy(settings)

    assert "connect-src 'self' https://files.example.com;" in csp
    assert "seaweed.internal" not in csp


def test_connect_src_names_aws_when_no_endpoint_is_set(tmp_path: Path) -> None:
    settings = make_settings(
        "postgresql://unused/db",
        tmp_path,
        storage={"s3_bucket": "originals", "s3_region": "eu-west-3"},
    )

    csp = content_security_policy(settings)

    assert "https://s3.eu-west-3.amazonaws.com" in csp
    assert "https://originals.s3.eu-west-3.amazonaws.com" in csp
