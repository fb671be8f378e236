"""What each REST operation promises, declared once beside its handler: the API reference.

Every route handler is made with :func:`operation`, which takes the handler's summary, the
token scope it needs and the errors it can answer with, and turns them into what Litestar
writes into the OpenAPI document:

- ``summary``, and a ``description`` that opens with the scope ("Needs a read token …")
  followed by the handler's docstring (what it returns);
- ``security`` as it really is: none for a public operation, else a Bearer API token or the
  panel's session cookie;
- one response per error status, each a ``oneOf`` of the error bodies that status can carry,
  every one the real envelope ``{status, code, message, details?}`` with its ``code`` fixed
  (one component per code, e.g. ``ProjectNotFoundError``).

The errors every operation of a scope can meet are added here (:func:`errors_of`): a token
that is missing (401), read-only for a write (403), a request the framework refuses (400,
404 for a malformed path id, 413, 408 for a stalled body), the database away (503).
``tests/integration/test_openapi.py`` checks the declared lists against what the service
functions raise and what a schemathesis run provokes.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import Any, Literal, NamedTuple, Union

import msgspec
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import SecurityRequirement

from service.errors import (
    DatabaseUnavailable,
    InvalidRequest,
    NotAuthenticated,
    RequestTimedOut,
    TokenReadOnly,
)
from service.panel.errors import CsrfFailed

Scope = Literal["public", "read", "write"]
"""Who may call an operation: anyone, any valid token (or session), a write token only."""

BEARER_SCHEME = "BearerToken"
SESSION_SCHEME = "SessionCookie"

_SCOPE_SENTENCES: dict[Scope, str] = {
    "public": "Needs no token.",
    "read": "Needs an API token (`Authorization: Bearer …`), read or write, or the panel's "
    "session cookie.",
    "write": "Needs a write token (`Authorization: Bearer …`; a read token is refused with 403 "
    "`token_read_only`), or the panel's session cookie with its `X-CSRF-Token` header.",
}


class ErrorDoc(NamedTuple):
    """One error an operation can answer with, as the reference shows it."""

    status: int
    code: str
    message: str

    @classmethod
    def of(cls, error: type[Exception] | ErrorDoc) -> ErrorDoc:
        """The documented form of an error class (its ``status``, ``code`` and docstring)."""
        if isinstance(error, ErrorDoc):
            return error
        status, code = getattr(error, "status", None), getattr(error, "code", None)
        if not isinstance(status, int) or not isinstance(code, str):
            raise TypeError(f"{error.__name__} has no status and code to document")
        return cls(status, code, " ".join((error.__doc__ or code).split()))


Raisable = type[Exception] | ErrorDoc
"""An error class with ``status`` and ``code``, or an :class:`ErrorDoc` for one the
framework answers with (see :mod:`service.http.errors`)."""

REQUEST_TOO_LARGE = ErrorDoc(413, "request_too_large", "The request body is larger than allowed.")
"""Litestar's own refusal of an oversized body (``_CODES_BY_STATUS`` in http/errors.py)."""
PATH_NOT_FOUND = ErrorDoc(404, "not_found", "No such route (a path id that is not a UUID).")

_SCOPE_ERRORS: dict[Scope, tuple[Raisable, ...]] = {
    "public": (),
    "read": (InvalidRequest, NotAuthenticated, DatabaseUnavailable),
    "write": (InvalidRequest, NotAuthenticated, TokenReadOnly, CsrfFailed, DatabaseUnavailable),
}
_BODY_ERRORS: tuple[Raisable, ...] = (InvalidRequest, RequestTimedOut, REQUEST_TOO_LARGE)


def errors_of(
    scope: Scope, raises: Iterable[Raisable], *, has_body: bool, has_path_ids: bool
) -> list[ErrorDoc]:
    """Every error an operation can answer with: its own and those of its scope, each once."""
    found: list[Raisable] = [*_SCOPE_ERRORS[scope], *raises]
    if has_body:
        found.extend(_BODY_ERRORS)
    if has_path_ids:
        found.append(PATH_NOT_FOUND)
    unique = {doc.code: doc for doc in map(ErrorDoc.of, found)}
    return sorted(unique.values())


def security_of(scope: Scope) -> list[SecurityRequirement]:
    """The OpenAPI security of a scope: alternatives, any one of which suffices."""
    if scope == "public":
        return []
    return [{BEARER_SCHEME: []}, {SESSION_SCHEME: []}]


def describe(scope: Scope, docstring: str | None) -> str:
    """The operation's description: its scope, then its docstring (what it returns)."""
    body = inspect.cleandoc(docstring or "")
    return f"{_SCOPE_SENTENCES[scope]}\n\n{body}".strip()


@cache
def error_body(code: str, status: int) -> type[msgspec.Struct]:
    """The error envelope with its ``status`` and ``code`` fixed: one component per code."""
    name = "".join(part.capitalize() for part in code.split("_")) + "Error"
    return msgspec.defstruct(
        name,
        [
            ("status", Literal[status]),
            ("code", Literal[code]),
            ("message", str),
            ("details", dict[str, Any] | msgspec.UnsetType, msgspec.UNSET),
        ],
        kw_only=True,
        module=__name__,
    )


def error_responses(errors: Sequence[ErrorDoc]) -> dict[int, ResponseSpec]:
    """One response per status: the bodies of its codes, and the codes named in its text."""
    by_status: dict[int, list[ErrorDoc]] = {}
    for doc in errors:
        by_status.setdefault(doc.status, []).append(doc)
    responses: dict[int, ResponseSpec] = {}
    for status, docs in sorted(by_status.items()):
        bodies = tuple(error_body(doc.code, doc.status) for doc in docs)
        container: Any = bodies[0] if len(bodies) == 1 else Union[bodies]  # noqa: UP007
        responses[status] = ResponseSpec(
            data_container=container,
            generate_examples=False,
            description="\n".join(f"- `{doc.code}`: {doc.message}" for doc in docs),
        )
    return responses


_PATH_ID = re.compile(r"\{\w+:uuid\}")


def operation(
    route: Callable[..., HTTPRouteHandler],
    path: str,
    *,
    operation_id: str,
    summary: str,
    scope: Scope,
    raises: Iterable[Raisable] = (),
    has_body: bool = False,
    responses: dict[int, ResponseSpec] | None = None,
    **options: Any,
) -> Callable[[Callable[..., Any]], HTTPRouteHandler]:
    """A Litestar route handler (``get``, ``post``…) documented as this module says.

    ``has_body`` says the operation reads a request body (so 400, 408 and 413 apply);
    ``responses`` documents answers that are not errors (the health check's 503).
    """
    declared = tuple(raises)

    def decorate(handler: Callable[..., Any]) -> HTTPRouteHandler:
        errors = errors_of(
            scope, declared, has_body=has_body, has_path_ids=bool(_PATH_ID.search(path))
        )
        made = route(
            path,
            operation_id=operation_id,
            summary=summary,
            description=describe(scope, handler.__doc__),
            responses={**error_responses(errors), **(responses or {})},
            security=security_of(scope),
            exclude_from_auth=scope == "public",
            **options,
        )(handler)
        made.opt["documented_errors"] = tuple(doc.code for doc in errors)
        made.opt["scope"] = scope
        return made

    return decorate
