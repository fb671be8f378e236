"""Multipart uploads against a real SeaweedFS server: each part URL is enforced by the
store (size, number, key, expiry), a failed part is simply sent again, and the parts
are joined only when every planned part is there."""

from __future__ import annotations

import os
import time

import httpx
import pytest

from service.storage.blobs import (
    MissingUploadParts,
    MultipartBlobStore,
    S3BlobStore,
    UploadGrant,
    UploadPartGrant,
)
from service.storage.blobs.multipart import MIN_PART_BYTES
from tests.integration.blobs.test_s3_store import s3_error_code

PART = MIN_PART_BYTES
DATA = os.urandom(2 * PART + 12_345)
"""Three parts: two full ones and a short last one."""


def start(store: S3BlobStore, key: str, *, expires_in: int = 60) -> UploadGrant:
    return store.presign_multipart_upload(
        key, content_type="application/pdf", size=len(DATA), part_size=PART, expires_in=expires_in
    )


def put_part(part: UploadPartGrant, data: bytes = DATA, url: str | None = None) -> httpx.Response:
    return httpx.put(url or part.url, content=data[part.offset : part.offset + part.size])


def test_the_s3_store_takes_multipart_uploads(s3_store: S3BlobStore) -> None:
    assert isinstance(s3_store, MultipartBlobStore)


def test_the_grant_has_one_url_per_part_covering_the_file(s3_store: S3BlobStore, key: str) -> None:
    grant = start(s3_store, key)

    assert grant.method == "MULTIPART"
    assert grant.url is None
    assert grant.multipart_id
    assert [(p.number, p.offset, p.size) for p in grant.parts] == [
        (1, 0, PART),
        (2, PART, PART),
        (3, 2 * PART, 12_345),
    ]
    assert all(f"partNumber={p.number}" in p.url for p in grant.parts)


def test_parts_sent_in_any_order_join_into_the_file_with_its_type(
    s3_store: S3BlobStore, key: str
) -> None:
    grant = start(s3_store, key)
    assert grant.multipart_id is not None

    for part in reversed(grant.parts):
        response = put_part(part)
        assert response.status_code == 200, response.text
    s3_store.complete_multipart_upload(key, grant.multipart_id, size=len(DATA), part_size=PART)

    info = s3_store.head(key)
    assert info is not None
    assert (info.size, info.content_type) == (len(DATA), "application/pdf")
    assert s3_store.read(key) == DATA


def test_a_part_sent_twice_still_joins_into_the_same_file(s3_store: S3BlobStore, key: str) -> None:
    grant = start(s3_store, key)
    assert grant.multipart_id is not None

    for part in grant.parts:
        assert put_part(part).status_code == 200
    assert put_part(grant.parts[1]).status_code == 200  # a retry after a lost response
    s3_store.complete_multipart_upload(key, grant.multipart_id, size=len(DATA), part_size=PART)

    assert s3_store.read(key) == DATA


def test_joining_twice_is_harmless(s3_store: S3BlobStore, key: str) -> None:
    grant = start(s3_store, key)
    assert grant.multipart_id is not None
    for part in grant.parts:
        put_part(part)

    s3_store.complete_multipart_upload(key, grant.multipart_id, size=len(DATA), part_size=PART)
    s3_store.complete_multipart_upload(key, grant.multipart_id, size=len(DATA), part_size=PART)

    assert s3_store.read(key) == DATA


def test_joining_with_parts_missing_names_them_and_joins_nothing(
    s3_store: S3BlobStore, key: str
) -> None:
    grant = start(s3_store, key)
    assert grant.multipart_id is not None
    put_part(grant.parts[1])

    with pytest.raises(MissingUploadParts) as raised:
        s3_store.complete_multipart_upload(key, grant.multipart_id, size=len(DATA), part_size=PART)

    assert raised.value.numbers == [1, 3]
    assert raised.value.code == "upload_parts_missing"
    assert s3_store.head(key) is None


def test_the_store_refuses_a_part_of_another_size(s3_store: S3BlobStore, key: str) -> None:
    part = start(s3_store, key).parts[2]

    longer = httpx.put(part.url, content=DATA[part.offset :] + b"!")
    shorter = httpx.put(part.url, content=DATA[part.offset : part.offset + part.size - 1])

    assert (longer.status_code, s3_error_code(longer)) == (403, "SignatureDoesNotMatch")
    assert (shorter.status_code, s3_error_code(shorter)) == (403, "SignatureDoesNotMatch")


def test_the_store_refuses_a_part_url_turned_to_another_part_or_key(
    s3_store: S3BlobStore, key: str
) -> None:
    first = start(s3_store, key).parts[0]

    other_number = put_part(first, url=first.url.replace("partNumber=1", "partNumber=2"))
    other_key = put_part(first, url=first.url.replace(key, key + "-elsewhere"))

    assert (other_number.status_code, s3_error_code(other_number)) == (
        403,
        "SignatureDoesNotMatch",
    )
    assert (other_key.status_code, s3_error_code(other_key)) == (403, "SignatureDoesNotMatch")


def test_the_store_refuses_a_part_after_the_grant_expired(s3_store: S3BlobStore, key: str) -> None:
    grant = start(s3_store, key, expires_in=1)

    time.sleep(2.1)
    response = put_part(grant.parts[2])

    assert response.status_code == 403
    assert s3_error_code(response) == "AccessDenied"
    assert "expired" in response.text


def test_aborting_drops_the_parts_and_refuses_more(s3_store: S3BlobStore, key: str) -> None:
    grant = start(s3_store, key)
    assert grant.multipart_id is not None
    put_part(grant.parts[0])

    s3_store.abort_multipart_upload(key, grant.multipart_id)
    s3_store.abort_multipart_upload(key, grant.multipart_id)  # idempotent
    late = put_part(grant.parts[1])

    assert (late.status_code, s3_error_code(late)) == (404, "NoSuchUpload")
    assert s3_store.head(key) is None


def test_the_file_keeps_the_granted_type_whatever_type_a_part_claims(
    s3_store: S3BlobStore, key: str
) -> None:
    grant = start(s3_store, key)
    assert grant.multipart_id is not None

    for part in grant.parts:
        response = httpx.put(
            part.url,
            content=DATA[part.offset : part.offset + part.size],
            headers={"Content-Type": "text/html"},
        )
        assert response.status_code == 200, response.text
    s3_store.complete_multipart_upload(key, grant.multipart_id, size=len(DATA), part_size=PART)

    info = s3_store.head(key)
    assert info is not None
    assert info.content_type == "application/pdf"
