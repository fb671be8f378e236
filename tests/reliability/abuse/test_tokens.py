"""Promise 6: API tokens are random, high-entropy, and compared in constant time.

That tokens are stored only as digests is tested in
tests/integration/test_auth_and_projects.py (test_tokens_are_stored_only_as_digests).
"""

from __future__ import annotations

import base64
import re
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from service.errors import NotAuthenticated
from service.services import tokens, users

pytestmark = pytest.mark.anyio

TOKEN_SHAPE = re.compile(r"sl_(?P<prefix>[0-9a-f]{8})_(?P<secret>[A-Za-z0-9_-]{43})")


async def _issue(db_url: str, count: int) -> list[str]:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        owner = await users.create_user(conn, "alice")
        issued = [owner.token]
        for index in range(count - 1):
            token, _ = await users.create_token(conn, owner.user.id, label=f"t{index}")
            issued.append(token)
    return issued


async def test_issued_tokens_carry_a_256_bit_random_secret(db_url: str) -> None:
    issued = await _issue(db_url, 50)

    secrets = []
    for token in issued:
        match = TOKEN_SHAPE.fullmatch(token)
        assert match, token
        raw = base64.urlsafe_b64decode(match["secret"] + "=")
        assert len(raw) == 32  # 256 bits from secrets.token_urlsafe(32)
        secrets.append(raw)
    assert len(set(issued)) == len(issued)
    # Random bytes: across 50 tokens every byte value position varies (a counter or a
    # timestamp would leave most leading bytes equal).
    assert all(len({secret[i] for secret in secrets}) > 10 for i in range(32))


async def test_authentication_compares_digests_with_the_constant_time_helper(
    db_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    (token,) = await _issue(db_url, 1)
    compared: list[tuple[bytes, bytes]] = []
    constant_time = tokens.digests_match

    def recording(stored: bytes, presented: bytes) -> bool:
        compared.append((stored, presented))
        return constant_time(stored, presented)

    monkeypatch.setattr(tokens, "digests_match", recording)
    async with await psycopg.AsyncConnection[Any].connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        principal = await users.authenticate(conn, token)
        with pytest.raises(NotAuthenticated):
            await users.authenticate(conn, token[:-1] + ("A" if token[-1] != "A" else "B"))

    assert principal.user_name == "alice"
    assert compared == [(tokens.digest(token), tokens.digest(token))]
