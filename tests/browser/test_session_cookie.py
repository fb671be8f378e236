"""The signed session cookie and its CSRF token, without a server."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from service.panel.session_cookie import SessionSigner, load_or_create_key

KEY = b"k" * 32
DIGEST = hashlib.sha256(b"sl_token").digest()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_an_issued_cookie_reads_back_to_its_claims() -> None:
    signer = SessionSigner(KEY, clock=Clock(1000))

    value, claims = signer.issue(DIGEST, lifetime=60)

    assert signer.read(value) == claims
    assert claims.token_digest == DIGEST
    assert claims.expires_at == 1060


def test_the_cookie_does_not_contain_the_token_digest_in_clear_hex() -> None:
    value, _ = SessionSigner(KEY).issue(DIGEST)

    assert DIGEST.hex() not in value
    assert "sl_token" not in value


@pytest.mark.parametrize(
    "tamper",
    [
        lambda v: v[:-2] + ("AA" if not v.endswith("AA") else "BB"),
        lambda v: v.replace("v1.", "v2.", 1),
        lambda v: ".".join([*v.split(".")[:3], "9999999999", *v.split(".")[4:]]),
        lambda v: v + ".extra",
        lambda v: "",
        lambda v: "garbage",
    ],
    ids=["signature", "version", "expiry", "extra-part", "empty", "garbage"],
)
def test_a_tampered_cookie_is_not_a_session(tamper: object) -> None:
    signer = SessionSigner(KEY)
    value, _ = signer.issue(DIGEST)

    assert callable(tamper)
    assert signer.read(tamper(value)) is None


def test_a_cookie_signed_with_another_key_is_not_a_session() -> None:
    value, _ = SessionSigner(b"x" * 32).issue(DIGEST)

    assert SessionSigner(KEY).read(value) is None


def test_an_expired_cookie_is_not_a_session() -> None:
    clock = Clock(1000)
    signer = SessionSigner(KEY, clock=clock)
    value, _ = signer.issue(DIGEST, lifetime=60)

    clock.now = 1060

    assert signer.read(value) is None


def test_the_csrf_token_is_bound_to_one_session() -> None:
    signer = SessionSigner(KEY)
    _, first = signer.issue(DIGEST)
    _, second = signer.issue(DIGEST)

    assert signer.csrf_matches(first, signer.csrf_token(first))
    assert not signer.csrf_matches(first, signer.csrf_token(second))
    assert not signer.csrf_matches(first, None)
    assert not signer.csrf_matches(first, "")


def test_the_key_file_is_created_once_and_private(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "session.key"

    first = load_or_create_key(path)
    second = load_or_create_key(path)

    assert first == second
    assert len(first) == 32
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["session.key"]
