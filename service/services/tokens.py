"""API tokens: 256 random bits, shown once, stored only as a SHA-256 digest.

A token looks like ``sl_<prefix>_<secret>``; the prefix (8 characters) is kept
in clear so a person can tell tokens apart and revoke one by it. Because a
token carries 256 bits of entropy a fast hash is enough (no password
stretching needed); lookups go by digest and the digests are compared again in
constant time.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import NamedTuple

TOKEN_PREFIX = "sl_"  # noqa: S105 - a format marker, not a secret


class NewToken(NamedTuple):
    token: str
    prefix: str
    digest: bytes


def new_token() -> NewToken:
    """A fresh random token with its display prefix and digest."""
    prefix = secrets.token_hex(4)
    token = f"{TOKEN_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
    return NewToken(token, prefix, digest(token))


def digest(token: str) -> bytes:
    """SHA-256 of the token's UTF-8 bytes."""
    return hashlib.sha256(token.encode("utf-8")).digest()


def digests_match(stored: bytes, presented: bytes) -> bool:
    """Constant-time comparison of two digests."""
    return hmac.compare_digest(stored, presented)


def looks_like_token(value: str) -> bool:
    """Cheap shape check before touching the database."""
    return value.startswith(TOKEN_PREFIX) and 20 <= len(value) <= 200 and value.isascii()
