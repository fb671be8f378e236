"""open_blob_store: the settings-facing factory."""

from __future__ import annotations

from pathlib import Path

import pytest

from service.storage.blobs import BLOB_STORE_KINDS, LocalBlobStore, S3BlobStore, open_blob_store
from tests.support.seaweed import SeaweedS3


def test_local_kind_opens_a_ready_local_store(tmp_path: Path) -> None:
    store = open_blob_store(
        "local",
        local_dir=tmp_path / "blobs",
        public_base_url="http://localhost:8000/",
        signing_secret="s" * 32,
    )

    assert isinstance(store, LocalBlobStore)
    assert store.name == "local"
    store.check()
    assert store.presign_upload(
        "a/b", content_type="text/plain", max_size=1, expires_in=1
    ).url.startswith("http://localhost:8000/blobs/a/b?grant=")


def test_s3_kind_opens_a_store_on_the_configured_bucket(seaweed_s3: SeaweedS3) -> None:
    store = open_blob_store(
        "s3",
        s3_endpoint_url=seaweed_s3.endpoint_url,
        s3_region=seaweed_s3.region,
        s3_bucket=seaweed_s3.bucket,
        s3_access_key_id=seaweed_s3.access_key_id,
        s3_secret_access_key=seaweed_s3.secret_access_key,
        s3_addressing_style="path",
    )

    assert isinstance(store, S3BlobStore)
    assert store.name == "s3"
    store.check()


def test_unknown_kind_lists_the_choices() -> None:
    with pytest.raises(ValueError, match="choose one of local, s3"):
        open_blob_store("ftp")
    assert BLOB_STORE_KINDS == ("local", "s3")


def test_local_kind_names_what_is_missing(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="public_base_url, signing_secret"):
        open_blob_store("local", local_dir=tmp_path)


def test_s3_kind_needs_a_bucket_and_a_known_addressing_style() -> None:
    with pytest.raises(ValueError, match="s3_bucket"):
        open_blob_store("s3")
    with pytest.raises(ValueError, match="choose one of path, virtual, auto"):
        open_blob_store("s3", s3_bucket="b", s3_addressing_style="sideways")
