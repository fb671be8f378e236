"""Errors the blob stores raise, each with an HTTP ``status`` and a stable ``code``.

Driver errors (botocore, OS errors) are translated once, at the store boundary,
so callers only ever see these. A subclass's docstring is its default message::

    ShortlistError (service/errors.py)
    └── BlobStoreError (500 blob_store_error)
        ├── BlobStoreUnavailable (503 blob_store_unavailable)
        │   └── BucketNotFound (503 blob_bucket_not_found)
        ├── BlobNotFound (404 blob_not_found)
        ├── InvalidBlobKey (400 blob_key_invalid)
        ├── BlobAlreadyExists (409 blob_already_exists)
        ├── RangeNotSatisfiable (416 range_not_satisfiable)
        ├── MissingUploadParts (409 upload_parts_missing)
        ├── UploadRejected (code and status per reason, see UPLOAD_REJECTIONS)
        └── DownloadRejected (403, code per reason, see DOWNLOAD_REJECTIONS)

Being a ShortlistError, each one reaches clients as the project's JSON error envelope ``{"status", "code", "message"}``.
"""

from __future__ import annotations

from typing import Literal

from service.errors import ShortlistError

UploadRejectionCode = Literal[
    "upload_grant_missing",
    "upload_signature_invalid",
    "upload_expired",
    "upload_key_mismatch",
    "upload_content_type_mismatch",
    "upload_too_large",
    "upload_empty",
    "upload_revoked",
]
UPLOAD_REJECTIONS: dict[UploadRejectionCode, tuple[int, str]] = {
    "upload_grant_missing": (403, "This upload URL carries no grant; ask for a new upload grant."),
    "upload_signature_invalid": (403, "The upload grant is not valid; ask for a new one."),
    "upload_expired": (403, "The upload grant has expired; ask for a new one."),
    "upload_key_mismatch": (403, "The upload grant was issued for a different file location."),
    "upload_content_type_mismatch": (
        415,
        "The Content-Type sent differs from the one the upload grant was issued for.",
    ),
    "upload_too_large": (413, "The file is larger than the upload grant allows."),
    "upload_empty": (400, "The upload is empty; send the file's bytes."),
    "upload_revoked": (
        403,
        "This upload grant was withdrawn when its document was deleted; ask for a new one.",
    ),
}

DownloadRejectionCode = Literal[
    "download_token_missing",
    "download_signature_invalid",
    "download_expired",
    "download_key_mismatch",
]
DOWNLOAD_REJECTIONS: dict[DownloadRejectionCode, str] = {
    "download_token_missing": "This download URL carries no token; ask for a new link.",
    "download_signature_invalid": "The download link is not valid; ask for a new one.",
    "download_expired": "The download link has expired; ask for a new one.",
    "download_key_mismatch": "The download link was issued for a different file.",
}


class BlobStoreError(ShortlistError):
    """The file store failed."""

    status = 500
    code = "blob_store_error"


class BlobStoreUnavailable(BlobStoreError):
    """The file store cannot be reached; try again shortly."""

    status = 503
    code = "blob_store_unavailable"


class BucketNotFound(BlobStoreUnavailable):
    """The configured bucket does not exist; create it or correct its name."""

    code = "blob_bucket_not_found"


class BlobNotFound(BlobStoreError):
    """No file is stored under that key."""

    status = 404
    code = "blob_not_found"


class InvalidBlobKey(BlobStoreError):
    """A blob key is a relative path of plain segments: no '..', '.'-prefixed or empty
    segments, no leading '/', no backslashes or control characters."""

    status = 400
    code = "blob_key_invalid"


class BlobAlreadyExists(BlobStoreError):
    """A file is already stored under that key; upload grants are single-use."""

    status = 409
    code = "blob_already_exists"


class RangeNotSatisfiable(BlobStoreError):
    """The requested byte range starts past the end of the file."""

    status = 416
    code = "range_not_satisfiable"


class MissingUploadParts(BlobStoreError):
    """Some parts of the multipart upload have not reached the store; send them again."""

    status = 409
    code = "upload_parts_missing"

    def __init__(self, numbers: list[int], message: str | None = None) -> None:
        listed = ", ".join(str(number) for number in numbers)
        super().__init__(
            message or f"Parts {listed} of the upload have not reached the store; send them again.",
            missing_parts=numbers,
        )
        self.numbers = numbers


class UploadRejected(BlobStoreError):
    """The upload was refused."""

    def __init__(self, code: UploadRejectionCode, message: str | None = None) -> None:
        self.status, default_message = UPLOAD_REJECTIONS[code]
        self.code = code
        super().__init__(message or default_message)


class DownloadRejected(BlobStoreError):
    """The download link was refused."""

    status = 403

    def __init__(self, code: DownloadRejectionCode, message: str | None = None) -> None:
        self.code = code
        super().__init__(message or DOWNLOAD_REJECTIONS[code])
