"""Where uploaded files live: one interface, a built-in local store and an S3 store.

See :mod:`service.blobs.base` for the interface and :mod:`service.blobs.errors`
for what can go wrong.
"""

from __future__ import annotations

from service.blobs.base import (
    BlobInfo,
    BlobStore,
    MultipartBlobStore,
    UploadGrant,
    UploadPartGrant,
)
from service.blobs.errors import (
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
from service.blobs.factory import BLOB_STORE_KINDS, open_blob_store
from service.blobs.keys import validate_key
from service.blobs.local import LOCAL_BLOB_ROUTE_PATH, LocalBlobStore
from service.blobs.s3 import S3BlobStore

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
