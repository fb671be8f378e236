"""Signed browser-session cookies and the CSRF tokens bound to them.

A session cookie holds three things, signed with HMAC-SHA256:

- the SHA-256 digest of the API token the person signed in with — never the
  token itself. The digest is what live tokens are already looked up by, so a
  revoked token ends its sessions on the next request, and a stolen cookie is
  no API token: nobody can turn the digest back into the token it came from
  (256 random bits), and without the signing key no cookie can be forged.
- a random nonce, which the CSRF token is derived from
  (``HMAC(key, "csrf:" + nonce)``): bound to one session, checked without any
  server-side state.
- an expiry (Unix seconds); the cookie's Max-Age matches it.

Format: ``v1.<digest>.<nonce>.<expires_at>.<signature>`` (URL-safe base64
without padding, expiry in decimal). The key comes from
``SHORTLIST_STORAGE__SIGNING_SECRET`` when that is set (derived per purpose, so
several instances can share sessions) and otherwise from ``DATA_DIR/session.key``,
generated on first use with mode 0600.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import hmac
import os
import secrets
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from service.settings import Settings

SESSION_COOKIE = "shortlist_session"
"""Name of the HttpOnly session cookie."""
CSRF_HEADER = "X-CSRF-Token"
"""Header a cookie-authenticated write must carry."""
SESSION_LIFETIME_SECONDS = 12 * 60 * 60
"""A session lasts a working day; signing in again starts a new one."""
COOKIE_PATH = "/api"
"""The cookie is only ever sent to the API, never to the page or the blob routes."""

_FORMAT_VERSION = "v1"
_KEY_FILE = "session.key"
_KEY_BYTES = 32
_DIGEST_BYTES = 32


class SessionClaims(NamedTuple):
    """What a valid session cookie says."""

    token_digest: bytes
    nonce: str
    expires_at: int
    """Unix seconds."""


class SessionSigner:
    """Issues and checks session cookies and their CSRF tokens with one key."""

    def __init__(self, key: bytes, *, clock: Callable[[], float] = time.time) -> None:
        if len(key) < 16:
            raise ValueError("A session key must be at least 16 bytes.")
        self._cookie_key = hmac.new(key, b"shortlist-session-cookie", hashlib.sha256).digest()
        self._csrf_key = hmac.new(key, b"shortlist-session-csrf", hashlib.sha256).digest()
        self._clock = clock

    def issue(
        self, token_digest: bytes, *, lifetime: int = SESSION_LIFETIME_SECONDS
    ) -> tuple[str, SessionClaims]:
        """A new cookie value for the token with this digest, and its claims."""
        claims = SessionClaims(
            token_digest=token_digest,
            nonce=secrets.token_urlsafe(16),
            expires_at=int(self._clock()) + lifetime,
        )
        body = ".".join(
            (_FORMAT_VERSION, _b64(claims.token_digest), claims.nonce, str(claims.expires_at))
        )
        return f"{body}.{_b64(self._sign(body))}", claims

    def read(self, cookie: str | None) -> SessionClaims | None:
        """The claims of a well-formed, correctly signed, unexpired cookie; else None."""
        if not cookie:
            return None
        parts = cookie.split(".")
        if len(parts) != 5 or parts[0] != _FORMAT_VERSION:
            return None
        body, signature = ".".join(parts[:4]), parts[4]
        try:
            presented = _unb64(signature)
            digest = _unb64(parts[1])
            expires_at = int(parts[3])
        except (binascii.Error, ValueError):
            return None
        if not hmac.compare_digest(presented, self._sign(body)):
            return None
        if len(digest) != _DIGEST_BYTES or self._clock() >= expires_at:
            return None
        return SessionClaims(token_digest=digest, nonce=parts[2], expires_at=expires_at)

    def csrf_token(self, claims: SessionClaims) -> str:
        """The CSRF token of this session."""
        return _b64(hmac.new(self._csrf_key, claims.nonce.encode(), hashlib.sha256).digest())

    def csrf_matches(self, claims: SessionClaims, presented: str | None) -> bool:
        """Whether ``presented`` is this session's CSRF token (constant-time)."""
        if not presented:
            return False
        return hmac.compare_digest(presented.encode(), self.csrf_token(claims).encode())

    def _sign(self, body: str) -> bytes:
        return hmac.new(self._cookie_key, body.encode(), hashlib.sha256).digest()


def session_signer(settings: Settings) -> SessionSigner:
    """The signer for this installation's sessions (key loaded once per process)."""
    secret = settings.storage.signing_secret
    return _signer_for(settings.data_dir, secret.get_secret_value() if secret else None)


@lru_cache(maxsize=8)
def _signer_for(data_dir: Path, shared_secret: str | None) -> SessionSigner:
    if shared_secret:
        return SessionSigner(
            hmac.new(shared_secret.encode(), b"shortlist-sessions", hashlib.sha256).digest()
        )
    return SessionSigner(load_or_create_key(data_dir / _KEY_FILE))


def load_or_create_key(path: Path) -> bytes:
    """The key in ``path``, created (mode 0600) when it does not exist yet.

    The new key is written to a private temporary file and hard-linked into
    place, so concurrent first starts agree on one key and nobody reads a
    half-written file.
    """
    try:
        return _read_key(path)
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(8)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(secrets.token_bytes(_KEY_BYTES))
        with contextlib.suppress(FileExistsError):
            os.link(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return _read_key(path)


def _read_key(path: Path) -> bytes:
    key = path.read_bytes()
    if len(key) < 16:
        raise ValueError(f"The session key in {path} is too short; delete it to make a new one.")
    return key


def _b64(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
