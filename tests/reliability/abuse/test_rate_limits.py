"""Promise 6: each API token has its own budget of searches and upload grants per minute.

Over budget is 429 with the JSON envelope ``rate_limited`` and an integer
``Retry-After``; another token (same user or another user) is unaffected.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import psycopg
import pytest
from litestar.testing import AsyncTestClient
from psycopg.rows import dict_row

from service.app import create_app
from service.services import users
from service.settings import Settings
from tests.conftest import make_settings
from tests.integration.documents.conftest import Uploader, bearer, new_user

pytestmark = pytest.mark.anyio

BUDGET = 3


@pytest.fixture
async def limited_client(db_url: str, tmp_path: Any) -> AsyncIterator[Any]:
    settings: Settings = make_settings(
        db_url,
        tmp_path,
        server={
            "run_worker": False,
            "search_rate_per_minute": BUDGET,
            "upload_rate_per_minute": BUDGET,
        },
    )
    async with AsyncTestClient(app=create_app(settings)) as client:
        yield client


async def second_token(db_url: str, user_id: Any) -> str:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        token, _ = await users.create_token(conn, user_id, label="second")
    return token


def assert_rate_limited(response: Any) -> None:
    assert response.status_code == 429, response.text
    body = response.json()
    assert body["status"] == 429
    assert body["code"] == "rate_limited"
    assert body["message"]
    retry_after = response.headers["retry-after"]
    assert retry_after.isdigit() and int(retry_after) >= 1
    assert body["details"]["retry_after"] == int(retry_after)


async def test_the_search_after_the_budget_is_429_with_retry_after_and_other_tokens_go_on(
    limited_client: Any, db_url: str
) -> None:
    alice, bob = await new_user(db_url, "alice"), await new_user(db_url, "bob")
    alice_again = await second_token(db_url, alice.user.id)

    def search(token: str, project: Any) -> Any:
        return limited_client.post(
            f"/api/projects/{project}/search", json={"query": "tides"}, headers=bearer(token)
        )

    for _ in range(BUDGET):
        assert (await search(alice.token, alice.project.id)).status_code == 200
    assert_rate_limited(await search(alice.token, alice.project.id))

    assert (await search(alice_again, alice.project.id)).status_code == 200
    assert (await search(bob.token, bob.project.id)).status_code == 200


async def test_the_upload_grant_after_the_budget_is_429_with_retry_after_and_other_tokens_go_on(
    limited_client: Any, db_url: str
) -> None:
    alice, bob = await new_user(db_url, "alice"), await new_user(db_url, "bob")
    alice_again = await second_token(db_url, alice.user.id)

    async def grant(token: str, project: Any, name: str) -> Any:
        return await Uploader(limited_client, token).grant(
            project, name, b"# notes\n", "text/markdown"
        )

    for index in range(BUDGET):
        assert (await grant(alice.token, alice.project.id, f"n{index}.md")).status_code == 201
    assert_rate_limited(await grant(alice.token, alice.project.id, "over.md"))

    assert (await grant(alice_again, alice.project.id, "other.md")).status_code == 201
    assert (await grant(bob.token, bob.project.id, "bob.md")).status_code == 201


async def test_search_and_upload_budgets_are_counted_apart(
    limited_client: Any, db_url: str
) -> None:
    alice = await new_user(db_url, "alice")
    for _ in range(BUDGET):
        await limited_client.post(
            f"/api/projects/{alice.project.id}/search",
            json={"query": "tides"},
            headers=bearer(alice.token),
        )
    granted = await Uploader(limited_client, alice.token).grant(
        alice.project.id, "n.md", b"# notes\n", "text/markdown"
    )
    assert granted.status_code == 201, granted.text
