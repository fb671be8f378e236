"""Users and their API tokens."""

from __future__ import annotations

from typing import NamedTuple
from uuid import UUID

from service.errors import EmptyName, NotAuthenticated, TokenNotFound, UserExists, UserNotFound
from service.records import ApiToken, Principal, Project, TokenScope, User
from service.services import projects, scopes, tokens
from service.storage.db import Connection, fetch_all, fetch_one, unique_violation_as


class NewUser(NamedTuple):
    user: User
    token: str
    project: Project


async def create_user(
    conn: Connection, name: str, *, scope: TokenScope = scopes.DEFAULT_SCOPE
) -> NewUser:
    """Create a user with a first API token (of ``scope``) and a default project, atomically."""
    if not name.strip():
        raise EmptyName("A user name may not be empty.")
    async with conn.transaction():
        with unique_violation_as(UserExists(f"A user named {name.strip()!r} already exists.")):
            row = await fetch_one(conn, "insert_user", name=name)
        assert row is not None
        user = User.from_row(row)
        token, _ = await create_token(conn, user.id, label="created with the user", scope=scope)
        project = await projects.create_project(conn, user.id, projects.DEFAULT_PROJECT_NAME)
    return NewUser(user, token, project)


async def get_user_by_name(conn: Connection, name: str) -> User:
    row = await fetch_one(conn, "fetch_user_by_name", name=name)
    if row is None:
        raise UserNotFound(f"No user named {name!r}.")
    return User.from_row(row)


async def list_users(conn: Connection) -> list[User]:
    rows = await fetch_all(conn, "list_users")
    return [User.from_row(row) for row in rows]


async def create_token(
    conn: Connection,
    user_id: UUID,
    *,
    label: str = "",
    scope: TokenScope = scopes.DEFAULT_SCOPE,
) -> tuple[str, ApiToken]:
    """A new token for the user that may do what ``scope`` allows; the clear token is returned
    here and never again."""
    fresh = tokens.new_token()
    row = await fetch_one(
        conn,
        "insert_api_token",
        user_id=user_id,
        token_hash=fresh.digest,
        prefix=fresh.prefix,
        label=label,
        scope=scopes.check_scope(scope),
    )
    assert row is not None
    return fresh.token, ApiToken.from_row(row)


async def list_tokens(conn: Connection, user_id: UUID) -> list[ApiToken]:
    rows = await fetch_all(conn, "list_api_tokens", user_id=user_id)
    return [ApiToken.from_row(row) for row in rows]


async def revoke_token(conn: Connection, prefix_or_id: str) -> list[ApiToken]:
    """Revoke the live tokens with this prefix (or id); at least one must match."""
    key = prefix_or_id.removeprefix(tokens.TOKEN_PREFIX).split("_", 1)[0]
    rows = await fetch_all(conn, "revoke_api_tokens_by_prefix", prefix=key)
    if not rows:
        raise TokenNotFound(f"No live token has the prefix or id {prefix_or_id!r}.")
    return [ApiToken.from_row(row) for row in rows]


async def authenticate(conn: Connection, presented: str) -> Principal:
    """The principal behind a live token, or NotAuthenticated."""
    if not tokens.looks_like_token(presented):
        raise NotAuthenticated("That is not a Shortlist API token.")
    return await authenticate_digest(conn, tokens.digest(presented))


async def authenticate_digest(
    conn: Connection,
    token_digest: bytes,
    *,
    refusal: str = "The API token is unknown or has been revoked.",
) -> Principal:
    """The principal behind the live token with this digest (what a panel session
    keeps), or NotAuthenticated with ``refusal``."""
    row = await fetch_one(conn, "fetch_principal_by_token_hash", token_hash=token_digest)
    if row is None or not tokens.digests_match(bytes(row["token_hash"]), token_digest):
        raise NotAuthenticated(refusal)
    return Principal.from_row(row)
