"""Where uploaded files live: one interface, a built-in local store and an S3 store.

See :mod:`service.storage.blobs.base` for the interface and :mod:`service.storage.blobs.errors`
for what can go wrong.
"""

from __future__ import annotations

from service.storage.blobs.base import (
    BlobInfo,
    BlobStore,
    MultipartBlobStore,
    UploadGrant,
    UploadPartGrant,
)
from service.storage.blobs.errors import (
    BlobAlreadyExists,
    BlobNotFound,
    BlobStoreError,
    BlobStoreUnavailable,
    BucketNotFound,
    DownloadRejected,
    InvalidBlobKey,
    MissingUploadParts,
    RangeNotSatisfiable,
    UploadRejected,
)
from service.storage.blobs.factory import BLOB_STORE_KINDS, open_blob_store
from service.storage.blobs.keys import validate_key
from service.storage.blobs.local import LOCAL_BLOB_ROUTE_PATH, LocalBlobStore
from service.storage.blobs.s3 import S3BlobStore

__all__ = [
    "BLOB_STORE_KINDS",
    "LOCAL_BLOB_ROUTE_PATH",
    "BlobAlreadyExists",
    "BlobInfo",
    "BlobNotFound",
    "BlobStore",
    "BlobStoreError",
    "BlobStoreUnavailable",
    "BucketNotFound",
    "DownloadRejected",
    "InvalidBlobKey",
    "LocalBlobStore",
    "MissingUploadParts",
    "MultipartBlobStore",
    "RangeNotSatisfiable",
    "S3BlobStore",
    "UploadGrant",
    "UploadPartGrant",
    "UploadRejected",
    "open_blob_store",
    "validate_key",
]
