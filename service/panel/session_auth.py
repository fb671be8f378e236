"""Who is calling, when a browser presents a session cookie instead of a Bearer token.

Safe methods (GET, HEAD, OPTIONS) need only a valid cookie; anything that
changes state must also carry the session's CSRF token in ``X-CSRF-Token``,
or it is refused with 403 ``csrf_failed`` before the database is touched.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from service.errors import NotAuthenticated
from service.panel.errors import CsrfFailed
from service.panel.session_cookie import CSRF_HEADER, SESSION_COOKIE, SessionClaims, session_signer
from service.records import Principal
from service.services import users
from service.storage.db import connection

if TYPE_CHECKING:
    from litestar.connection import ASGIConnection

    from service.runtime import Runtime

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def has_session_cookie(request: ASGIConnection[Any, Any, Any, Any]) -> bool:
    return SESSION_COOKIE in request.cookies


async def authenticate_session(
    runtime: Runtime, request: ASGIConnection[Any, Any, Any, Any]
) -> tuple[Principal, SessionClaims]:
    """The principal and session behind the request's cookie.

    Raises NotAuthenticated for a missing, forged or expired cookie (or a
    revoked token) and CsrfFailed for a write without the session's CSRF token.
    """
    signer = session_signer(runtime.settings)
    claims = signer.read(request.cookies.get(SESSION_COOKIE))
    if claims is None:
        raise NotAuthenticated("Your session has expired or is not valid; sign in again.")
    method = str(request.scope.get("method", "GET")).upper()
    if method not in SAFE_METHODS and not signer.csrf_matches(
        claims, request.headers.get(CSRF_HEADER)
    ):
        raise CsrfFailed()
    async with connection(runtime.pool) as conn:
        principal = await users.authenticate_digest(
            conn,
            claims.token_digest,
            refusal="The API token this session was opened with has been revoked; sign in again.",
        )
    return principal, claims
