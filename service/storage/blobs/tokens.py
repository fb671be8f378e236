"""Signed, expiring tokens for the local store's upload and download URLs.

Format (version 1): ``v1.<payload>.<signature>``, both parts unpadded URL-safe
base64. The payload is compact JSON; the signature is HMAC-SHA256 over
``v1.<payload>`` with a key derived from the signing secret per purpose, so an
upload grant can never pass as a download token (or the other way round) and
the secret is never used directly. Signatures are compared in constant time.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any, Literal, NamedTuple

from service.storage.blobs.disposition import DISPOSITIONS, Disposition
from service.storage.blobs.errors import DownloadRejected, UploadRejected

FORMAT_VERSION = "v1"
MIN_SECRET_BYTES = 16

Purpose = Literal["upload", "download"]


class UploadClaims(NamedTuple):
    """What an upload grant allows."""

    key: str
    content_type: str
    max_size: int
    expires_at: int
    """Unix seconds."""


class DownloadClaims(NamedTuple):
    """What a download token allows, and how to present the file."""

    key: str
    filename: str
    content_type: str
    disposition: Disposition
    expires_at: int
    """Unix seconds."""


class TokenSigner:
    """Issues and checks tokens with one secret."""

    def __init__(self, secret: str | bytes) -> None:
        raw = secret.encode() if isinstance(secret, str) else secret
        if len(raw) < MIN_SECRET_BYTES:
            raise ValueError(f"The blob signing secret must be at least {MIN_SECRET_BYTES} bytes.")
        self._keys: dict[Purpose, bytes] = {
            purpose: hmac.new(raw, f"shortlist-blob-{purpose}".encode(), hashlib.sha256).digest()
            for purpose in ("upload", "download")
        }

    def sign_upload(self, claims: UploadClaims) -> str:
        payload = {"k": claims.key, "t": claims.content_type, "m": claims.max_size}
        return self._sign("upload", {**payload, "e": claims.expires_at})

    def sign_download(self, claims: DownloadClaims) -> str:
        payload = {"k": claims.key, "f": claims.filename, "t": claims.content_type}
        return self._sign("download", {**payload, "d": claims.disposition, "e": claims.expires_at})

    def verify_upload(self, token: str | None, *, key: str, now: float) -> UploadClaims:
        """The claims of a valid, unexpired grant for ``key``; raises UploadRejected."""
        if not token:
            raise UploadRejected("upload_grant_missing")
        try:
            payload = self._unpack("upload", token)
            claims = UploadClaims(
                str(payload["k"]), str(payload["t"]), int(payload["m"]), int(payload["e"])
            )
        except (_InvalidTokenError, KeyError, TypeError, ValueError):
            raise UploadRejected("upload_signature_invalid") from None
        if now >= claims.expires_at:
            raise UploadRejected("upload_expired")
        if claims.key != key:
            raise UploadRejected("upload_key_mismatch")
        return claims

    def verify_download(self, token: str | None, *, key: str, now: float) -> DownloadClaims:
        """The claims of a valid, unexpired token for ``key``; raises DownloadRejected."""
        if not token:
            raise DownloadRejected("download_token_missing")
        try:
            payload = self._unpack("download", token)
            disposition = payload["d"]
            if disposition not in DISPOSITIONS:
                raise _InvalidTokenError
            claims = DownloadClaims(
                str(payload["k"]),
                str(payload["f"]),
                str(payload["t"]),
                disposition,
                int(payload["e"]),
            )
        except (_InvalidTokenError, KeyError, TypeError, ValueError):
            raise DownloadRejected("download_signature_invalid") from None
        if now >= claims.expires_at:
            raise DownloadRejected("download_expired")
        if claims.key != key:
            raise DownloadRejected("download_key_mismatch")
        return claims

    def _sign(self, purpose: Purpose, payload: dict[str, Any]) -> str:
        body = _b64encode(json.dumps(payload, separators=(",", ":")).encode())
        signed = f"{FORMAT_VERSION}.{body}"
        return f"{signed}.{_b64encode(self._mac(purpose, signed))}"

    def _unpack(self, purpose: Purpose, token: str) -> dict[str, Any]:
        """The payload of a correctly signed token; raises _InvalidTokenError otherwise."""
        signed, _, signature = token.rpartition(".")
        version, _, body = signed.partition(".")
        if version != FORMAT_VERSION or not body:
            raise _InvalidTokenError
        expected = _b64encode(self._mac(purpose, signed)).encode()
        if not hmac.compare_digest(signature.encode("utf-8", "replace"), expected):
            raise _InvalidTokenError
        try:
            payload = json.loads(_b64decode(body))
        except (binascii.Error, ValueError):
            raise _InvalidTokenError from None
        if not isinstance(payload, dict):
            raise _InvalidTokenError
        return payload

    def _mac(self, purpose: Purpose, signed: str) -> bytes:
        message = signed.encode("utf-8", "replace")
        return hmac.new(self._keys[purpose], message, hashlib.sha256).digest()


class _InvalidTokenError(Exception):
    """Malformed, unknown version, or signature mismatch."""


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
