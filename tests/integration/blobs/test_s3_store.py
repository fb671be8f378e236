"""The S3 store against a real SeaweedFS server: the store, not our code, enforces grants."""

from __future__ import annotations

import base64
import json
import socket
import time
import uuid

import httpx
import pytest

from service.storage.blobs import (
    BlobNotFound,
    BlobStoreUnavailable,
    BucketNotFound,
    InvalidBlobKey,
    S3BlobStore,
    UploadGrant,
)
from tests.support.seaweed import SeaweedS3

PDF = b"%PDF-1.7\n" + b"x" * 500 + b"\n%%EOF\n"


def browser_post(grant: UploadGrant, body: bytes, content_type: str) -> httpx.Response:
    """Send the grant as a browser form would: the grant's fields in order, then ``file``."""
    assert grant.method == "POST"
    return httpx.post(
        grant.url, data=grant.fields, files={"file": ("report.pdf", body, content_type)}
    )


def s3_error_code(response: httpx.Response) -> str:
    start = response.text.index("<Code>") + len("<Code>")
    return response.text[start : response.text.index("</Code>")]


def test_upload_within_the_grant_is_stored_with_its_size_and_type(
    s3_store: S3BlobStore, key: str
) -> None:
    grant = s3_store.presign_upload(
        key, content_type="application/pdf", max_size=1024, expires_in=60
    )

    response = browser_post(grant, PDF, "application/pdf")

    assert response.status_code == 204, response.text
    info = s3_store.head(key)
    assert info is not None
    assert info.size == len(PDF)
    assert info.content_type == "application/pdf"
    assert s3_store.read(key) == PDF


def test_grant_pins_key_type_and_size_in_its_policy(s3_store: S3BlobStore, key: str) -> None:
    grant = s3_store.presign_upload(key, content_type="text/csv", max_size=77, expires_in=60)

    policy = json.loads(base64.b64decode(grant.fields["policy"]))

    assert grant.fields["key"] == key
    assert grant.fields["Content-Type"] == "text/csv"
    assert {"key": key} in policy["conditions"]
    assert {"Content-Type": "text/csv"} in policy["conditions"]
    assert ["content-length-range", 1, 77] in policy["conditions"]
    assert grant.expires_at.tzinfo is not None


def test_store_refuses_a_file_larger_than_the_grant(s3_store: S3BlobStore, key: str) -> None:
    grant = s3_store.presign_upload(
        key, content_type="application/pdf", max_size=100, expires_in=60
    )

    response = browser_post(grant, PDF, "application/pdf")

    assert response.status_code == 400
    assert s3_error_code(response) == "EntityTooLarge"
    assert s3_store.head(key) is None


def test_store_refuses_an_empty_file(s3_store: S3BlobStore, key: str) -> None:
    grant = s3_store.presign_upload(
        key, content_type="application/pdf", max_size=100, expires_in=60
    )

    response = browser_post(grant, b"", "application/pdf")

    assert response.status_code == 400
    assert s3_error_code(response) == "EntityTooSmall"
    assert s3_store.head(key) is None


def test_store_refuses_a_different_content_type(s3_store: S3BlobStore, key: str) -> None:
    grant = s3_store.presign_upload(
        key, content_type="application/pdf", max_size=1024, expires_in=60
    )
    fields = {**grant.fields, "Content-Type": "text/html"}

    response = browser_post(grant._replace(fields=fields), b"<script>", "text/html")

    assert response.status_code == 403
    assert s3_error_code(response) == "AccessDenied"
    assert s3_store.head(key) is None


def test_store_refuses_a_different_key(s3_store: S3BlobStore, key: str) -> None:
    grant = s3_store.presign_upload(
        key, content_type="application/pdf", max_size=1024, expires_in=60
    )
    other_key = f"projects/{uuid.uuid4()}/uploads/{uuid.uuid4()}"
    fields = {**grant.fields, "key": other_key}

    response = browser_post(grant._replace(fields=fields), PDF, "application/pdf")

    assert response.status_code == 403
    assert s3_error_code(response) == "AccessDenied"
    assert s3_store.head(other_key) is None
    assert s3_store.head(key) is None


def test_store_refuses_an_expired_grant(s3_store: S3BlobStore, key: str) -> None:
    grant = s3_store.presign_upload(
        key, content_type="application/pdf", max_size=1024, expires_in=1
    )
    time.sleep(2.1)

    response = browser_post(grant, PDF, "application/pdf")

    assert response.status_code == 403
    assert "expired" in response.text.lower()
    assert s3_store.head(key) is None


def test_store_refuses_a_tampered_signature(s3_store: S3BlobStore, key: str) -> None:
    grant = s3_store.presign_upload(
        key, content_type="application/pdf", max_size=1024, expires_in=60
    )
    signature = grant.fields["x-amz-signature"]
    flipped = ("0" if signature[0] != "0" else "1") + signature[1:]
    fields = {**grant.fields, "x-amz-signature": flipped}

    response = browser_post(grant._replace(fields=fields), PDF, "application/pdf")

    assert response.status_code == 403
    assert s3_error_code(response) == "SignatureDoesNotMatch"
    assert s3_store.head(key) is None


def test_store_refuses_a_policy_rewritten_to_allow_more(s3_store: S3BlobStore, key: str) -> None:
    grant = s3_store.presign_upload(key, content_type="application/pdf", max_size=10, expires_in=60)
    policy = json.loads(base64.b64decode(grant.fields["policy"]))
    policy["conditions"] = [
        ["content-length-range", 1, 10**9] if isinstance(c, list) else c
        for c in policy["conditions"]
    ]
    forged = base64.b64encode(json.dumps(policy).encode()).decode()

    response = browser_post(
        grant._replace(fields={**grant.fields, "policy": forged}), PDF, "application/pdf"
    )

    assert response.status_code == 403
    assert s3_error_code(response) == "SignatureDoesNotMatch"
    assert s3_store.head(key) is None


def test_download_url_serves_the_bytes_inline_with_the_document_type(
    s3_store: S3BlobStore, key: str
) -> None:
    s3_store.write(key, PDF, "application/octet-stream")

    url = s3_store.download_url(
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
    disposition = response.headers["content-disposition"]
    assert disposition.startswith("inline;")
    assert "filename*=UTF-8''R%C3%A9sum%C3%A9%202024.pdf" in disposition


def test_presign_endpoint_is_the_address_browsers_are_sent_to(
    seaweed_s3: SeaweedS3, s3_store: S3BlobStore, key: str
) -> None:
    browser_facing = seaweed_s3.endpoint_url.replace("127.0.0.1", "localhost")
    store = S3BlobStore(
        bucket=seaweed_s3.bucket,
        endpoint_url=seaweed_s3.endpoint_url,
        presign_endpoint_url=browser_facing,
        access_key_id=seaweed_s3.access_key_id,
        secret_access_key=seaweed_s3.secret_access_key,
    )
    grant = store.presign_upload(key, content_type="application/pdf", max_size=1024, expires_in=60)

    assert grant.url.startswith(browser_facing)
    assert browser_post(grant, PDF, "application/pdf").status_code == 204
    url = store.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )
    assert url.startswith(browser_facing)
    assert httpx.get(url).content == PDF


def test_download_url_answers_range_requests(s3_store: S3BlobStore, key: str) -> None:
    s3_store.write(key, PDF, "application/pdf")
    url = s3_store.download_url(
        key, filename="a.pdf", content_type="application/pdf", disposition="inline", expires_in=60
    )

    response = httpx.get(url, headers={"Range": "bytes=0-7"})

    assert response.status_code == 206
    assert response.content == PDF[:8]


def test_delete_is_idempotent(s3_store: S3BlobStore, key: str) -> None:
    s3_store.write(key, b"hello", "text/plain")

    s3_store.delete(key)
    s3_store.delete(key)

    assert s3_store.head(key) is None


def test_reading_a_missing_key_raises_blob_not_found(s3_store: S3BlobStore, key: str) -> None:
    with pytest.raises(BlobNotFound):
        s3_store.read(key)


def test_check_passes_when_the_bucket_is_reachable(s3_store: S3BlobStore) -> None:
    s3_store.check()


def test_check_reports_a_missing_bucket_and_ensure_bucket_creates_it(
    seaweed_s3: SeaweedS3,
) -> None:
    store = S3BlobStore(
        bucket=f"missing-{uuid.uuid4().hex[:12]}",
        endpoint_url=seaweed_s3.endpoint_url,
        access_key_id=seaweed_s3.access_key_id,
        secret_access_key=seaweed_s3.secret_access_key,
    )
    with pytest.raises(BucketNotFound):
        store.check()

    store.ensure_bucket()
    store.ensure_bucket()

    store.check()


def test_cors_rules_let_only_the_allowed_origin_fetch_from_the_browser(
    seaweed_s3: SeaweedS3,
) -> None:
    store = S3BlobStore(
        bucket=f"cors-{uuid.uuid4().hex[:12]}",
        endpoint_url=seaweed_s3.endpoint_url,
        access_key_id=seaweed_s3.access_key_id,
        secret_access_key=seaweed_s3.secret_access_key,
    )
    store.ensure_bucket()
    store.configure_cors(["http://panel.example"])
    object_url = f"{seaweed_s3.endpoint_url}/{store.bucket}/projects/x/uploads/y"

    def preflight(origin: str, method: str = "GET") -> httpx.Response:
        return httpx.options(
            object_url,
            headers={"Origin": origin, "Access-Control-Request-Method": method},
        )

    allowed = preflight("http://panel.example")
    assert allowed.status_code == 200
    assert allowed.headers["access-control-allow-origin"] == "http://panel.example"
    assert "ETag" in allowed.headers["access-control-expose-headers"]
    part_upload = preflight("http://panel.example", "PUT")  # the parts of large files
    assert part_upload.status_code == 200
    assert "PUT" in part_upload.headers["access-control-allow-methods"]
    refused = preflight("http://elsewhere.example")
    assert "access-control-allow-origin" not in refused.headers


def test_check_reports_wrong_credentials_as_unavailable(seaweed_s3: SeaweedS3) -> None:
    store = S3BlobStore(
        bucket=seaweed_s3.bucket,
        endpoint_url=seaweed_s3.endpoint_url,
        access_key_id=seaweed_s3.access_key_id,
        secret_access_key="not-the-secret",
        max_attempts=1,
    )
    with pytest.raises(BlobStoreUnavailable) as raised:
        store.check()
    assert raised.value.status == 503


def test_check_raises_unavailable_when_the_endpoint_is_down() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        closed_port = sock.getsockname()[1]
    store = S3BlobStore(
        bucket="shortlist",
        endpoint_url=f"http://127.0.0.1:{closed_port}",
        access_key_id="key",
        secret_access_key="secret",
        connect_timeout=1,
        max_attempts=2,
    )

    with pytest.raises(BlobStoreUnavailable) as raised:
        store.check()

    assert raised.value.code == "blob_store_unavailable"
    assert raised.value.to_dict()["status"] == 503
    assert f"127.0.0.1:{closed_port}" in raised.value.message


@pytest.mark.parametrize("bad_key", ["../etc/passwd", "/abs", "a\\b", "a\x00b", "a//b", ".hidden"])
def test_s3_store_refuses_unsafe_keys(s3_store: S3BlobStore, bad_key: str) -> None:
    with pytest.raises(InvalidBlobKey):
        s3_store.presign_upload(bad_key, content_type="text/plain", max_size=10, expires_in=60)
