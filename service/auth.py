"""Who is calling: Bearer API tokens on every ``/api`` route except health.

The middleware resolves the token to a :class:`~service.records.Principal`
once per request and leaves it on ``request.user``; handlers receive it through
the ``principal`` dependency. A missing, malformed, unknown or revoked token is
a 401 with the JSON envelope and a ``WWW-Authenticate`` header.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult

from service.db import connection
from service.errors import NotAuthenticated
from service.records import Principal
from service.services import users

if TYPE_CHECKING:
    from service.runtime import Runtime


def bearer_token(headers: Any) -> str | None:
    """The token of an ``Authorization: Bearer`` header, if there is one."""
    value = headers.get("authorization")
    if not value:
        return None
    scheme, _, token = str(value).partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


async def principal_for_token(runtime: Runtime, token: str | None) -> Principal:
    """Resolve a presented token or raise NotAuthenticated."""
    if token is None:
        raise NotAuthenticated()
    async with connection(runtime.pool) as conn:
        return await users.authenticate(conn, token)


class TokenAuthenticationMiddleware(AbstractAuthenticationMiddleware):
    async def authenticate_request(
        self, connection: ASGIConnection[Any, Any, Any, Any]
    ) -> AuthenticationResult:
        runtime: Runtime = connection.app.state.runtime
        token = bearer_token(connection.headers)
        principal = await principal_for_token(runtime, token)
        return AuthenticationResult(user=principal, auth=token)


def provide_principal(request: Request[Any, Any, Any]) -> Principal:
    """The authenticated caller (the middleware has already refused anyone else)."""
    principal: Principal = request.user
    return principal
