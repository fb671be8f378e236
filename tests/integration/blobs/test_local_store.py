"""The built-in local store, its upload and download routes served over real HTTP."""

from __future__ import annotations

import base64
import json
import select
import socket
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from service.storage.blobs import (
    BlobNotFound,
    BlobStoreUnavailable,
    InvalidBlobKey,
    LocalBlobStore,
    UploadGrant,
)
from tests.integration.blobs.conftest import SIGNING_SECRET

PDF = b"%PDF-1.7\n" + b"x" * 500 + b"\n%%EOF\n"
ENVELOPE_KEYS = {"status", "code", "message"}


def browser_put(grant: UploadGrant, body: bytes | Iterator[bytes]) -> httpx.Response:
    """Send the grant as the browser does: PUT the raw body with the grant's headers."""
    assert grant.method == "PUT"
    return httpx.put(grant.url, content=body, headers=grant.headers, timeout=30)


def chunks(total: int, size: int = 64 * 1024) -> Iterator[bytes]:
    """A body without Content-Length (sent chunked), so only the byte counter can stop it."""
    sent = 0
    while sent < total:
        piece = min(size, total - sent)
        sent += piece
        yield b"y" * piece


def assert_error(response: httpx.Response, status: int, code: str) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert set(body) == ENVELOPE_KEYS
    assert body["status"] == status
    assert body["code"] == code
    assert body["message"]


def read_response(sock: socket.socket) -> bytes:
    """One HTTP response (head and Content-Length body) read off a raw socket."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536) or b"\r\n\r\n"
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length:")
        ),
        0,
    )
    while len(body) < length and (data := sock.recv(65536)):
        body += data
    return head + b"\r\n\r\n" + body


def leftovers(store: LocalBlobStore, key: str) -> list[str]:
    """Everything in the key's directory (upload parts included)."""
    directory = store.path_for(key).parent
    return sorted(p.name for p in directory.iterdir()) if directory.exists() else []


def grant_for(store: LocalBlobStore, key: str, max_size: int = 1024) -> UploadGrant:
    return store.presign_upload(
        key, content_type="application/pdf", max_size=max_size, expires_in=60
    )


def test_upload_within_the_grant_is_stored(local_store: LocalBlobStore, key: str) -> None:
    grant = grant_for(local_store, key)

    response = browser_put(grant, PDF)

    assert response.status_code == 201, response.text
    assert response.json() == {"key": key, "size": len(PDF)}
    info = local_store.head(key)
    assert info is not None
    assert (info.size, info.content_type) == (len(PDF), "application/pdf")
    assert local_store.read(key) == PDF
    assert leftovers(local_store, key) == sorted(
        [key.rsplit("/", 1)[1], f".{key.rsplit('/', 1)[1]}.meta.json"]
    )


def test_grant_is_a_put_to_the_blobs_route_with_the_declared_type(
    local_server: tuple[str, LocalBlobStore], key: str
) -> None:
    base_url, store = local_server

    grant = grant_for(store, key)

    assert grant.url.startswith(f"{base_url}/blobs/{key}?grant=")
    assert grant.headers == {"Content-Type": "application/pdf"}
    assert grant.fields == {}
    assert grant.expires_at.tzinfo is not None


def test_upload_beyond_the_app_body_limit_is_accepted_when_the_grant_allows_it(
    local_store: LocalBlobStore, key: str
) -> None:
    size = 12 * 1024 * 1024  # litestar's default request_max_body_size is 10 MB
    grant = grant_for(local_store, key, max_size=size)

    response = browser_put(grant, chunks(size))

    assert response.status_code == 201, response.text
    info = local_store.head(key)
    assert info is not None and info.size == size


def test_oversize_streamed_upload_is_aborted_and_leaves_no_file(
    local_store: LocalBlobStore, key: str
) -> None:
    grant = grant_for(local_store, key, max_size=100 * 1024)

    response = browser_put(grant, chunks(1024 * 1024))

    assert_error(response, 413, "upload_too_large")
    assert local_store.head(key) is None
    assert leftovers(local_store, key) == []


def test_oversize_announced_length_is_refused_before_reading(
    local_store: LocalBlobStore, key: str
) -> None:
    grant = grant_for(local_store, key, max_size=100)

    response = browser_put(grant, PDF)

    assert_error(response, 413, "upload_too_large")
    assert local_store.head(key) is None


def test_empty_upload_is_refused(local_store: LocalBlobStore, key: str) -> None:
    response = browser_put(grant_for(local_store, key), b"")

    assert_error(response, 400, "upload_empty")
    assert local_store.head(key) is None


def test_expired_grant_is_refused(
    local_blob_dir: Path, local_store: LocalBlobStore, key: str
) -> None:
    ten_minutes_ago = LocalBlobStore(
        local_blob_dir,
        public_base_url=local_store.public_base_url,
        signing_secret=SIGNING_SECRET,
        clock=lambda: time.time() - 600,
    )
    grant = grant_for(ten_minutes_ago, key)

    response = browser_put(grant, PDF)

    assert_error(response, 403, "upload_expired")
    assert local_store.head(key) is None


def test_tampered_grant_is_refused(local_store: LocalBlobStore, key: str) -> None:
    grant = grant_for(local_store, key, max_size=10)
    token = parse_qs(urlsplit(grant.url).query)["grant"][0]
    version, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["m"] = 10**9  # raise the size limit, keep the signature
    forged_payload = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    forged = f"{version}.{forged_payload}.{signature}"

    response = browser_put(grant._replace(url=grant.url.replace(token, forged)), PDF)

    assert_error(response, 403, "upload_signature_invalid")
    assert local_store.head(key) is None


def test_grant_signed_with_another_secret_is_refused(local_store: LocalBlobStore, key: str) -> None:
    impostor = LocalBlobStore(
        local_store.root, public_base_url=local_store.public_base_url, signing_secret="y" * 32
    )

    response = browser_put(grant_for(impostor, key), PDF)

    assert_error(response, 403, "upload_signature_invalid")


def test_missing_grant_is_refused(local_store: LocalBlobStore, key: str) -> None:
    grant = grant_for(local_store, key)

    response = browser_put(grant._replace(url=grant.url.split("?")[0]), PDF)

    assert_error(response, 403, "upload_grant_missing")


def test_grant_for_another_key_is_refused(local_store: LocalBlobStore, key: str) -> None:
    grant = grant_for(local_store, key)
    other_key = f"projects/{uuid.uuid4()}/uploads/{uuid.uuid4()}"

    response = browser_put(grant._replace(url=grant.url.replace(key, other_key)), PDF)

    assert_error(response, 403, "upload_key_mismatch")
    assert local_store.head(other_key) is None


def test_different_content_type_is_refused(local_store: LocalBlobStore, key: str) -> None:
    grant = grant_for(local_store, key)

    response = browser_put(grant._replace(headers={"Content-Type": "text/html"}), b"<script>")

    assert_error(response, 415, "upload_content_type_mismatch")
    assert local_store.head(key) is None


def test_second_upload_with_the_same_grant_is_refused(
    local_store: LocalBlobStore, key: str
) -> None:
    grant = grant_for(local_store, key)
    assert browser_put(grant, PDF).status_code == 201

    response = browser_put(grant, b"%PDF-replaced")

    assert_error(response, 409, "blob_already_exists")
    assert local_store.read(key) == PDF


@pytest.mark.parametrize(
    "raw_path",
    [
        "/blobs/%2E%2E/%2E%2E/escape",
        "/blobs/projects/%2E%2E/x",
        "/blobs/a%5Cb",
        "/blobs/.hidden",
    ],
)
def test_path_traversal_keys_are_refused_over_http(
    local_server: tuple[str, LocalBlobStore], raw_path: str
) -> None:
    base_url, store = local_server
    grant = grant_for(store, "projects/whatever")

    response = httpx.put(
        base_url + raw_path + "?" + grant.url.split("?")[1], content=PDF, headers=grant.headers
    )

    assert_error(response, 400, "blob_key_invalid")
    assert not (store.root.parent / "escape").exists()


@pytest.mark.parametrize(
    "bad_key",
    ["", "../escape", "a/../../escape", "/etc/passwd", "a\\..\\b", "a\x00b", "a//b", "a/", ".meta"],
)
def test_unsafe_keys_are_refused_by_every_method(local_store: LocalBlobStore, bad_key: str) -> None:
    with pytest.raises(InvalidBlobKey):
        local_store.presign_upload(bad_key, content_type="text/plain", max_size=1, expires_in=60)
    with pytest.raises(InvalidBlobKey):
        local_store.write(bad_key, b"x", "text/plain")
    with pytest.raises(InvalidBlobKey):
        local_store.read(bad_key)
    with pytest.raises(InvalidBlobKey):
        local_store.head(bad_key)
    with pytest.raises(InvalidBlobKey):
        local_store.delete(bad_key)


def test_download_url_serves_the_file_inline(local_store: LocalBlobStore, key: str) -> None:
    local_store.write(key, PDF, "application/pdf")

    url = local_store.download_url(
        key,
        filename="Résumé 2024.pdf",
        content_type="application/pdf",
        disposition="inline",
        expires_in=60,
    )
    response = httpx.get(url)

    assert response.status_code == 200
    assert response.content == PDF
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["accept-ranges"] == "bytes"
    disposition = response.headers["content-disposition"]
    assert disposition.startswith("inline;")
    assert "filename*=UTF-8''R%C3%A9sum%C3%A9%202024.pdf" in disposition


@pytest.mark.parametrize(
    ("range_header", "first", "last"),
    [
        ("bytes=0-7", 0, 7),
        ("bytes=500-", 500, len(PDF) - 1),
        ("bytes=-7", len(PDF) - 7, len(PDF) - 1),
    ],
)
def test_download_answers_a_single_range(
    local_store: LocalBlobStore, key: str, range_header: str, first: int, last: int
) -> None:
    local_store.write(key, PDF, "application/pdf")
    url = local_store.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )

    response = httpx.get(url, headers={"Range": range_header})

    assert response.status_code == 206
    assert response.content == PDF[first : last + 1]
    assert response.headers["content-range"] == f"bytes {first}-{last}/{len(PDF)}"


@pytest.mark.parametrize(
    "range_header", ["bytes=0-1,4-5", "bytes=abc", "items=0-1", "bytes=9-3", "bytes=-", "bytes=²-"]
)
def test_download_ignores_ranges_it_does_not_serve_and_sends_the_whole_file(
    local_store: LocalBlobStore, key: str, range_header: str
) -> None:
    local_store.write(key, PDF, "application/pdf")
    url = local_store.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )

    response = httpx.get(url, headers={b"Range": range_header.encode("latin-1")})

    assert response.status_code == 200
    assert response.content == PDF


def test_download_range_past_the_end_is_not_satisfiable(
    local_store: LocalBlobStore, key: str
) -> None:
    local_store.write(key, PDF, "application/pdf")
    url = local_store.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )

    response = httpx.get(url, headers={"Range": f"bytes={len(PDF)}-"})

    assert_error(response, 416, "range_not_satisfiable")


def test_download_without_a_valid_token_is_refused(local_store: LocalBlobStore, key: str) -> None:
    local_store.write(key, PDF, "application/pdf")
    url = local_store.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )
    upload_grant_url = grant_for(local_store, key).url

    assert_error(httpx.get(url.split("?")[0]), 403, "download_token_missing")
    assert_error(httpx.get(url[:-3] + "abc"), 403, "download_signature_invalid")
    assert_error(
        httpx.get(upload_grant_url.replace("grant=", "download=")),
        403,
        "download_signature_invalid",
    )


def test_download_token_for_another_key_is_refused(local_store: LocalBlobStore, key: str) -> None:
    other_key = f"projects/{uuid.uuid4()}/uploads/{uuid.uuid4()}"
    local_store.write(other_key, b"secret", "text/plain")
    url = local_store.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )

    response = httpx.get(url.replace(key, other_key))

    assert_error(response, 403, "download_key_mismatch")


def test_expired_download_token_is_refused(
    local_blob_dir: Path, local_store: LocalBlobStore, key: str
) -> None:
    local_store.write(key, PDF, "application/pdf")
    ten_minutes_ago = LocalBlobStore(
        local_blob_dir,
        public_base_url=local_store.public_base_url,
        signing_secret=SIGNING_SECRET,
        clock=lambda: time.time() - 600,
    )
    url = ten_minutes_ago.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )

    assert_error(httpx.get(url), 403, "download_expired")


def test_download_of_a_deleted_file_is_not_found(local_store: LocalBlobStore, key: str) -> None:
    local_store.write(key, PDF, "application/pdf")
    url = local_store.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )
    local_store.delete(key)

    assert_error(httpx.get(url), 404, "blob_not_found")


def test_delete_is_idempotent_and_removes_the_metadata(
    local_store: LocalBlobStore, key: str
) -> None:
    local_store.write(key, b"hello", "text/plain")

    local_store.delete(key)
    local_store.delete(key)

    assert local_store.head(key) is None
    assert leftovers(local_store, key) == []
    with pytest.raises(BlobNotFound):
        local_store.read(key)


def test_server_side_write_overwrites(local_store: LocalBlobStore, key: str) -> None:
    local_store.write(key, b"first", "text/plain")
    local_store.write(key, b"second!", "text/markdown")

    assert local_store.read(key) == b"second!"
    assert local_store.head(key) == (7, "text/markdown")


def test_check_raises_unavailable_when_the_directory_is_gone(tmp_path: Path) -> None:
    store = LocalBlobStore(
        tmp_path / "blobs", public_base_url="http://localhost", signing_secret=SIGNING_SECRET
    )
    store.check()
    (tmp_path / "blobs").rmdir()

    with pytest.raises(BlobStoreUnavailable):
        store.check()


@pytest.mark.parametrize(("max_size", "expires_in"), [(0, 60), (10, 0)])
def test_grant_must_allow_at_least_one_byte_and_one_second(
    local_store: LocalBlobStore, key: str, max_size: int, expires_in: int
) -> None:
    with pytest.raises(ValueError, match="at least 1"):
        local_store.presign_upload(
            key, content_type="text/plain", max_size=max_size, expires_in=expires_in
        )


def test_short_signing_secret_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least 16 bytes"):
        LocalBlobStore(tmp_path, public_base_url="http://localhost", signing_secret="short")


def test_oversize_upload_is_answered_before_the_client_finishes_sending(
    local_store: LocalBlobStore, key: str
) -> None:
    """The byte counter stops the upload mid-stream: the 413 arrives while the body is
    still open, and the server closes the connection rather than drain the rest."""
    grant = grant_for(local_store, key, max_size=64 * 1024)
    url = urlsplit(grant.url)
    chunk = b"z" * (16 * 1024)
    with socket.create_connection((url.hostname or "", url.port or 80), timeout=10) as sock:
        sock.sendall(
            f"PUT {url.path}?{url.query} HTTP/1.1\r\nHost: {url.netloc}\r\n"
            "Content-Type: application/pdf\r\nTransfer-Encoding: chunked\r\n\r\n".encode()
        )
        for _ in range(8):  # 128 KiB: twice the grant, and never a terminating chunk
            # A client stops sending once the answer is there, as browsers and curl do: the
            # server may close with the rest of the body unread, and a write after that close
            # fails (EPIPE) depending only on timing.
            if select.select([sock], [], [], 0.05)[0]:
                break
            sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
        reply = read_response(sock).decode("latin-1")
        sock.settimeout(2)  # well below uvicorn's 5 s keep-alive: a close, not an idle timeout
        closed_by_server = sock.recv(1) == b""

    assert reply.startswith("HTTP/1.1 413")
    assert '"code":"upload_too_large"' in reply
    assert closed_by_server
    assert local_store.head(key) is None
    assert leftovers(local_store, key) == []


def test_client_disconnecting_mid_upload_leaves_nothing_behind(
    local_store: LocalBlobStore, key: str
) -> None:
    grant = grant_for(local_store, key, max_size=1024 * 1024)
    url = urlsplit(grant.url)
    with socket.create_connection((url.hostname or "", url.port or 80), timeout=10) as sock:
        sock.sendall(
            f"PUT {url.path}?{url.query} HTTP/1.1\r\nHost: {url.netloc}\r\n"
            "Content-Type: application/pdf\r\nContent-Length: 100000\r\n\r\n".encode()
            + b"z" * 30000
        )
        deadline = time.monotonic() + 5
        while not leftovers(local_store, key) and time.monotonic() < deadline:
            time.sleep(0.01)  # wait until the server has started writing the part file
        assert leftovers(local_store, key), "the upload never started"

    deadline = time.monotonic() + 5
    while leftovers(local_store, key) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert leftovers(local_store, key) == []
    assert local_store.head(key) is None
