"""Who is calling: Bearer API tokens (or the panel's session cookie) on ``/api`` routes.

The middleware resolves the caller to a :class:`~service.records.Principal`
once per request and leaves it on ``request.user``; handlers receive it through
the ``principal`` dependency. A missing, malformed, unknown or revoked token is
a 401 with the JSON envelope and a ``WWW-Authenticate`` header.

A request without an ``Authorization`` header may instead present the panel's
session cookie (see :mod:`service.panel.session_auth`); then ``request.auth``
holds the session's claims, and writes must carry the CSRF header. A Bearer
header always wins and never needs CSRF: another site cannot make a browser
send one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from litestar import Request
from litestar.connection import ASGIConnection
from litestar.middleware import AbstractAuthenticationMiddleware, AuthenticationResult

from service.errors import NotAuthenticated
from service.panel.session_auth import authenticate_session, has_session_cookie
from service.records import Principal
from service.services import users
from service.storage.db import connection

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
        if "authorization" not in connection.headers and has_session_cookie(connection):
            session_principal, claims = await authenticate_session(runtime, connection)
            return AuthenticationResult(user=session_principal, auth=claims)
        token = bearer_token(connection.headers)
        principal = await principal_for_token(runtime, token)
        return AuthenticationResult(user=principal, auth=token)


def provide_principal(request: Request[Any, Any, Any]) -> Principal:
    """The authenticated caller (the middleware has already refused anyone else)."""
    principal: Principal = request.user
    return principal
