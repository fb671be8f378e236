"""Build the configured blob store from plain settings values."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

from service.storage.blobs.base import BlobStore
from service.storage.blobs.local import LocalBlobStore
from service.storage.blobs.s3 import AddressingStyle, S3BlobStore

BLOB_STORE_KINDS = ("local", "s3")


def open_blob_store(
    kind: str,
    *,
    local_dir: Path | None = None,
    public_base_url: str | None = None,
    signing_secret: str | bytes | None = None,
    s3_endpoint_url: str | None = None,
    s3_presign_endpoint_url: str | None = None,
    s3_region: str = "us-east-1",
    s3_bucket: str | None = None,
    s3_access_key_id: str | None = None,
    s3_secret_access_key: str | None = None,
    s3_addressing_style: str = "path",
) -> BlobStore:
    """The store of ``kind``: ``"local"`` (needs local_dir, public_base_url and
    signing_secret) or ``"s3"`` (needs s3_bucket; the rest has defaults).

    A ``"local"`` store is a :class:`LocalBlobStore`, whose routes
    (:func:`service.storage.blobs.local_routes.local_blob_router`) the app must mount.
    Raises ValueError naming what is missing or the valid choices.
    """
    if kind == "local":
        missing = [
            name
            for name, value in (
                ("local_dir", local_dir),
                ("public_base_url", public_base_url),
                ("signing_secret", signing_secret),
            )
            if not value
        ]
        if missing:
            raise ValueError(f"The local blob store needs {', '.join(missing)}.")
        assert local_dir is not None and public_base_url and signing_secret
        return LocalBlobStore(
            Path(local_dir), public_base_url=public_base_url, signing_secret=signing_secret
        )
    if kind == "s3":
        if not s3_bucket:
            raise ValueError("The S3 blob store needs s3_bucket.")
        styles = get_args(AddressingStyle)
        if s3_addressing_style not in styles:
            raise ValueError(
                f"Unknown S3 addressing style {s3_addressing_style!r}; choose one of "
                f"{', '.join(styles)}."
            )
        return S3BlobStore(
            bucket=s3_bucket,
            endpoint_url=s3_endpoint_url,
            presign_endpoint_url=s3_presign_endpoint_url,
            region=s3_region,
            access_key_id=s3_access_key_id,
            secret_access_key=s3_secret_access_key,
            addressing_style=s3_addressing_style,  # type: ignore[arg-type]
        )
    raise ValueError(
        f"Unknown blob store kind {kind!r}; choose one of {', '.join(BLOB_STORE_KINDS)}."
    )
