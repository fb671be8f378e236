"""One JSON error envelope for every failure the HTTP API can report.

``{"status": 404, "code": "project_not_found", "message": "..."}`` — plus
``details`` where there is more to say (validation errors list the fields).
No handler lets a stack trace reach a client: anything unexpected is logged
and answered as ``internal_error``.
"""

from __future__ import annotations

import logging
from typing import Any

import psycopg
from litestar import MediaType, Request, Response
from litestar.exceptions import (
    HTTPException,
    NotAuthorizedException,
    PermissionDeniedException,
    ValidationException,
)
from litestar.status_codes import HTTP_500_INTERNAL_SERVER_ERROR

from retrieval.errors import RetrievalError
from service.errors import (
    NotAuthenticated,
    RateLimited,
    RequestTimedOut,
    ShortlistError,
    as_shortlist_error,
)
from service.storage.db import database_error

logger = logging.getLogger(__name__)

_CODES_BY_STATUS = {
    400: "invalid_request",
    401: "not_authenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    408: "request_timeout",
    413: "request_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    503: "service_unavailable",
}


def error_response(body: dict[str, Any], headers: dict[str, str] | None = None) -> Response[Any]:
    return Response(
        content=body,
        status_code=int(body["status"]),
        media_type=MediaType.JSON,
        headers=headers,
    )


def shortlist_error_handler(_: Request[Any, Any, Any], exc: ShortlistError) -> Response[Any]:
    headers: dict[str, str] = {}
    if isinstance(exc, NotAuthenticated):
        headers["WWW-Authenticate"] = 'Bearer realm="shortlist"'
    if isinstance(exc, RateLimited):
        headers["Retry-After"] = str(exc.retry_after)
    if isinstance(exc, RequestTimedOut):
        headers["Connection"] = "close"  # the rest of a stalled body is not waited for
    return error_response(exc.to_dict(), headers)


def component_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    error = as_shortlist_error(exc)
    if error is None:
        return unexpected_error_handler(request, exc)
    if error.status >= 500:
        logger.warning(
            "%s during %s %s: %s", error.code, request.method, request.url.path, error.message
        )
    return shortlist_error_handler(request, error)


def http_exception_handler(_: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    status = exc.status_code
    body: dict[str, Any] = {
        "status": status,
        "code": _CODES_BY_STATUS.get(status, "http_error"),
        "message": exc.detail,
    }
    if isinstance(exc, ValidationException) and exc.extra:
        body["message"] = "The request is not valid; see details."
        body["details"] = {"errors": exc.extra}
    headers = dict(exc.headers or {})
    if isinstance(exc, NotAuthorizedException | PermissionDeniedException) and status == 401:
        headers.setdefault("WWW-Authenticate", 'Bearer realm="shortlist"')
    return error_response(body, headers)


def database_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    """A driver error that escaped a lent connection, as the DB boundary translates it."""
    error = database_error(exc)
    if error is None:
        return unexpected_error_handler(request, exc)
    logger.warning(
        "database unavailable during %s %s: %s",
        request.method,
        request.url.path,
        exc.__class__.__name__,
    )
    return shortlist_error_handler(request, error)


def unexpected_error_handler(request: Request[Any, Any, Any], exc: Exception) -> Response[Any]:
    logger.exception("unexpected error during %s %s", request.method, request.url.path)
    return error_response(
        {
            "status": HTTP_500_INTERNAL_SERVER_ERROR,
            "code": "internal_error",
            "message": "Something went wrong on our side; it has been logged.",
        }
    )


EXCEPTION_HANDLERS: dict[type[Exception] | int, Any] = {
    ShortlistError: shortlist_error_handler,
    RetrievalError: component_error_handler,
    HTTPException: http_exception_handler,
    psycopg.Error: database_error_handler,
    Exception: unexpected_error_handler,
}
