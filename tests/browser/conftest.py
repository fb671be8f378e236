"""Fixtures of the panel's tests: a user with a token, straight from the service layer."""

from __future__ import annotations

import psycopg
import pytest
from psycopg.rows import dict_row

from service.services import users


async def create_user(db_url: str, name: str) -> users.NewUser:
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        return await users.create_user(conn, name)


@pytest.fixture
async def alice(db_url: str) -> users.NewUser:
    return await create_user(db_url, "alice")
