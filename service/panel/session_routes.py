"""``/api/session``: sign a browser in with an API token, and out again.

Signing in checks the token and answers with an HttpOnly, SameSite=Strict
cookie (Secure when the service is reached over https) scoped to ``/api``; the
token itself is never stored in the browser. The response also carries the
session's CSRF token, which the page keeps in memory and sends as
``X-CSRF-Token`` on every write.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from litestar import Controller, Request, Response, delete, get, post
from litestar.datastructures import Cookie
from litestar.params import JSONBody

from service.errors import DatabaseUnavailable, NotAuthenticated
from service.http.dependencies import ConnectionDep, PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.http.schemas import Me
from service.panel.errors import CsrfFailed
from service.panel.schemas import Session, SessionCreate
from service.panel.session_cookie import (
    COOKIE_PATH,
    SESSION_COOKIE,
    SessionClaims,
    session_signer,
)
from service.records import Principal
from service.services import tokens, users
from service.settings import Settings


class SessionController(Controller):
    path = "/api/session"
    tags = ["session"]

    @operation(get, "/", operation_id="GetSession", summary="The browser's session", scope="read")
    async def read_session(
        self, request: Request[Any, Any, Any], runtime: RuntimeDep, principal: PrincipalDep
    ) -> Session:
        """The signed-in user and the session's CSRF token.

        Returns:
            The session (401 when there is none).
        """
        claims = request.auth if isinstance(request.auth, SessionClaims) else None
        return _session_body(runtime.settings, principal, claims)

    @operation(
        post,
        "/",
        operation_id="CreateSession",
        summary="Sign a browser in with an API token",
        scope="public",
        raises=(NotAuthenticated, CsrfFailed, DatabaseUnavailable),
        has_body=True,
    )
    async def create_session(
        self,
        request: Request[Any, Any, Any],
        runtime: RuntimeDep,
        conn: ConnectionDep,
        data: JSONBody[SessionCreate],
    ) -> Response[Session]:
        """Sign in: check the API token and set the session cookie.

        Returns:
            The new session (201) with ``Set-Cookie``; 401 not_authenticated for a
            token that is unknown or revoked; 403 csrf_failed when another site
            sent the request.
        """
        if request.headers.get("sec-fetch-site", "same-origin") == "cross-site":
            raise CsrfFailed("Signing in from another site is not allowed.")
        principal = await users.authenticate(conn, data.token.strip())
        value, claims = session_signer(runtime.settings).issue(tokens.digest(data.token.strip()))
        cookie = Cookie(
            key=SESSION_COOKIE,
            value=value,
            path=COOKIE_PATH,
            max_age=max(claims.expires_at - int(datetime.now(UTC).timestamp()), 0),
            httponly=True,
            samesite="strict",
            secure=_is_https(request, runtime.settings),
        )
        return Response(
            _session_body(runtime.settings, principal, claims),
            status_code=201,
            cookies=[cookie],
            headers={"Cache-Control": "no-store"},
        )

    @operation(
        delete, "/", operation_id="DeleteSession", summary="Sign a browser out", scope="public"
    )
    async def delete_session(
        self, request: Request[Any, Any, Any], runtime: RuntimeDep
    ) -> Response[None]:
        """Sign out: clear the session cookie (answers 204 even when there was none)."""
        response: Response[None] = Response(None, status_code=204)
        response.set_cookie(
            key=SESSION_COOKIE,
            value="",
            path=COOKIE_PATH,
            max_age=0,
            expires=0,
            httponly=True,
            samesite="strict",
            secure=_is_https(request, runtime.settings),
        )
        return response


def _session_body(
    settings: Settings, principal: Principal, claims: SessionClaims | None
) -> Session:
    user = Me.of(principal)
    if claims is None:
        return Session(user=user, csrf_token=None, expires_at=None)
    return Session(
        user=user,
        csrf_token=session_signer(settings).csrf_token(claims),
        expires_at=datetime.fromtimestamp(claims.expires_at, UTC),
    )


def _is_https(request: Request[Any, Any, Any], settings: Settings) -> bool:
    return request.url.scheme == "https" or settings.public_url.startswith("https://")
