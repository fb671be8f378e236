"""The one interface every blob store implements, and the values it returns.

Uploads never pass through the API process: the service asks the store for an
:class:`UploadGrant`, hands it to the browser, and the browser sends the bytes
straight to the store, which enforces the grant (key, type, size, expiry).
Methods are synchronous (boto3 is); async callers run them in a thread.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol, runtime_checkable

if TYPE_CHECKING:
    from service.storage.blobs.disposition import Disposition


class UploadPartGrant(NamedTuple):
    """One part of a multipart upload: PUT bytes ``offset`` to ``offset + size`` of the file
    to ``url`` (the store checks the exact size; a failed part is simply sent again)."""

    number: int
    offset: int
    size: int
    url: str


class UploadGrant(NamedTuple):
    """How a browser may upload one file, once, before ``expires_at``."""

    method: Literal["POST", "PUT", "MULTIPART"]
    url: str | None
    """POST and PUT: where the file goes. MULTIPART: None; each part has its own URL."""
    fields: dict[str, str]
    """POST: form fields to send, in order, before the file field (named ``file``)."""
    headers: dict[str, str]
    """PUT, and each PUT of a MULTIPART part: headers to send with the raw body."""
    expires_at: datetime
    """UTC; never later than the store's own expiry."""
    parts: tuple[UploadPartGrant, ...] = ()
    """MULTIPART: the parts, in order, covering the whole file."""
    multipart_id: str | None = None
    """MULTIPART: the store's id of the upload, which the service keeps to join the parts."""


class BlobInfo(NamedTuple):
    """What the store knows about a stored file."""

    size: int
    content_type: str | None


class BlobStore(Protocol):
    """A place for uploaded files, addressed by relative keys such as
    ``projects/<uuid>/uploads/<uuid>`` (see :func:`service.storage.blobs.keys.validate_key`)."""

    name: str
    """``"local"`` or ``"s3"``."""

    def presign_upload(
        self, key: str, *, content_type: str, max_size: int, expires_in: int
    ) -> UploadGrant:
        """A grant to upload 1..max_size bytes of ``content_type`` to ``key``."""
        ...

    def head(self, key: str) -> BlobInfo | None:
        """Size and type of the file at ``key``, or None when there is none."""
        ...

    def read(self, key: str) -> bytes:
        """The whole file; raises BlobNotFound."""
        ...

    def write(self, key: str, data: bytes, content_type: str) -> None:
        """Store ``data`` at ``key`` from the server side (CLI ingest, tests); overwrites."""
        ...

    def delete(self, key: str) -> None:
        """Remove the file at ``key``; deleting a missing file is not an error."""
        ...

    def download_url(
        self,
        key: str,
        *,
        filename: str,
        content_type: str,
        disposition: Disposition,
        expires_in: int,
    ) -> str:
        """An expiring URL serving the file as ``content_type`` (whatever type it was
        stored with) under ``disposition``: ``inline`` lets a browser PDF viewer open it
        so ``#page=N`` works, ``attachment`` makes the browser save it (see
        :mod:`service.storage.blobs.disposition`)."""
        ...

    def check(self) -> None:
        """Readiness probe; raises BlobStoreUnavailable."""
        ...


@runtime_checkable
class MultipartBlobStore(BlobStore, Protocol):
    """A store that also takes large files in parts (S3 multipart uploads)."""

    def presign_multipart_upload(
        self, key: str, *, content_type: str, size: int, part_size: int, expires_in: int
    ) -> UploadGrant:
        """Start a multipart upload of exactly ``size`` bytes to ``key`` and return a
        MULTIPART grant with one presigned URL per ``part_size`` part."""
        ...

    def complete_multipart_upload(
        self, key: str, multipart_id: str, *, size: int, part_size: int
    ) -> None:
        """Join the parts into the file at ``key``. Raises MissingUploadParts, naming
        the parts to send again, unless the store holds every planned part at its
        planned size. Completing an upload that is already complete does nothing."""
        ...

    def abort_multipart_upload(self, key: str, multipart_id: str) -> None:
        """Drop an unfinished multipart upload and its parts; idempotent."""
        ...


def check_grant_limits(*, max_size: int, expires_in: int) -> None:
    """Raise ValueError unless an upload grant would allow at least one byte for at
    least one second."""
    if max_size < 1:
        raise ValueError(f"max_size must be at least 1 byte, not {max_size}.")
    if expires_in < 1:
        raise ValueError(f"expires_in must be at least 1 second, not {expires_in}.")
