"""What a token's scope allows: the one rule every write obeys, whichever door it came through.

A ``read`` token searches, lists and reads everything its user may; a ``write`` token may also
change the user's projects. Each service function that changes something calls
:func:`require_write` before anything else (before a rate limit is spent), so REST, MCP, the
panel and the CLI refuse a read token's write alike, with ``token_read_only``.
"""

from __future__ import annotations

from typing import get_args

from service.errors import TokenReadOnly
from service.records import Principal, TokenScope

SCOPES: tuple[TokenScope, ...] = get_args(TokenScope)
DEFAULT_SCOPE: TokenScope = "write"
"""A token's scope unless its creator says otherwise: tokens made before scopes existed wrote."""


def may_write(principal: Principal) -> bool:
    return principal.scope == "write"


def require_write(principal: Principal) -> None:
    """Refuse with TokenReadOnly unless the caller's token may write."""
    if not may_write(principal):
        raise TokenReadOnly()


def check_scope(scope: str) -> TokenScope:
    """``scope`` as a TokenScope; ValueError naming the choices otherwise."""
    for known in SCOPES:
        if scope == known:
            return known
    raise ValueError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
