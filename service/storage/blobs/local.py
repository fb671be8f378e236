"""The built-in blob store: files in a directory, uploads through signed URLs.

It is the default when no S3 endpoint is configured. The browser PUTs the bytes
to ``{public_base_url}/blobs/{key}?grant=<token>`` (served by
:mod:`service.storage.blobs.local_routes`), never through the API's own endpoints.

Layout under ``root``: each key is a relative path to the file; the content type
lives beside it in ``.<name>.meta.json``; uploads in flight are ``.upload-*.part``
files in the destination directory (same filesystem, so the final rename is
atomic). Keys may not have ``.``-prefixed segments, so none of these names can
collide with a key.

Overwrites: an upload through a grant never replaces an existing file (409
blob_already_exists) — keys are fresh UUID paths, so a second PUT is a replayed
grant, and a registered document's bytes must not change under it. Server-side
:meth:`LocalBlobStore.write` does overwrite, like S3's PutObject.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import time
from collections.abc import AsyncIterable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple
from urllib.parse import quote, urlencode

import anyio
import anyio.to_thread

from service.storage.blobs.base import BlobInfo, UploadGrant, check_grant_limits
from service.storage.blobs.disposition import Disposition
from service.storage.blobs.errors import (
    BlobAlreadyExists,
    BlobNotFound,
    BlobStoreUnavailable,
    InvalidBlobKey,
    UploadRejected,
)
from service.storage.blobs.keys import validate_key
from service.storage.blobs.tokens import DownloadClaims, TokenSigner, UploadClaims

LOCAL_BLOB_ROUTE_PATH = "/blobs"
"""Where :func:`service.storage.blobs.local_routes.local_blob_router` is mounted."""

_PART_PREFIX = ".upload-"
_PART_SUFFIX = ".part"


class LocalFile(NamedTuple):
    """A stored file, ready to be served."""

    path: Path
    size: int


class LocalBlobStore:
    """Files under ``root``; upload and download URLs signed with ``signing_secret``."""

    name = "local"

    def __init__(
        self,
        root: Path,
        *,
        public_base_url: str,
        signing_secret: str | bytes,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.root = root
        self.public_base_url = public_base_url.rstrip("/")
        self._signer = TokenSigner(signing_secret)
        self._clock = clock
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BlobStoreUnavailable(f"Cannot create the blob directory {root}: {exc}") from exc
        self._resolved_root = root.resolve()

    # -- BlobStore -----------------------------------------------------------------

    def presign_upload(
        self, key: str, *, content_type: str, max_size: int, expires_in: int
    ) -> UploadGrant:
        self.path_for(key)
        check_grant_limits(max_size=max_size, expires_in=expires_in)
        expires_at = int(self._clock()) + expires_in
        grant = self._signer.sign_upload(UploadClaims(key, content_type, max_size, expires_at))
        return UploadGrant(
            method="PUT",
            url=f"{self._url_for(key)}?{urlencode({'grant': grant})}",
            fields={},
            headers={"Content-Type": content_type},
            expires_at=datetime.fromtimestamp(expires_at, UTC),
        )

    def head(self, key: str) -> BlobInfo | None:
        path = self.path_for(key)
        try:
            size = path.stat().st_size
        except FileNotFoundError:
            return None
        return BlobInfo(size=size, content_type=self._read_content_type(path))

    def read(self, key: str) -> bytes:
        try:
            return self.path_for(key).read_bytes()
        except FileNotFoundError:
            raise BlobNotFound(f"No file is stored under {key!r}.") from None

    def write(self, key: str, data: bytes, content_type: str) -> None:
        path = self.path_for(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        part = _new_part_path(path)
        try:
            with part.open("xb") as file:
                file.write(data)
                file.flush()
                os.fsync(file.fileno())
            self._write_content_type(path, content_type)
            part.replace(path)
        finally:
            part.unlink(missing_ok=True)

    def delete(self, key: str) -> None:
        path = self.path_for(key)
        path.unlink(missing_ok=True)
        _meta_path(path).unlink(missing_ok=True)

    def download_url(
        self,
        key: str,
        *,
        filename: str,
        content_type: str,
        disposition: Disposition,
        expires_in: int,
    ) -> str:
        self.path_for(key)
        expires_at = int(self._clock()) + expires_in
        token = self._signer.sign_download(
            DownloadClaims(key, filename, content_type, disposition, expires_at)
        )
        return f"{self._url_for(key)}?{urlencode({'download': token})}"

    def check(self) -> None:
        if not self.root.is_dir() or not os.access(self.root, os.W_OK | os.X_OK):
            raise BlobStoreUnavailable(
                f"The blob directory {self.root} is missing or not writable."
            )

    # -- used by local_routes --------------------------------------------------------

    def path_for(self, key: str) -> Path:
        """The file for ``key``; raises InvalidBlobKey for keys that could escape ``root``."""
        path = self.root / validate_key(key)
        if not path.resolve().is_relative_to(self._resolved_root):
            raise InvalidBlobKey("That blob key leads outside the blob directory.")
        return path

    def authorize_upload(
        self, key: str, *, grant: str | None, content_type: str | None, announced_size: int | None
    ) -> UploadClaims:
        """Check a PUT before reading its body: grant signature, expiry, key, type,
        announced size, and that the key is still free."""
        path = self.path_for(key)
        claims = self._signer.verify_upload(grant, key=key, now=self._clock())
        if content_type != claims.content_type:
            raise UploadRejected(
                "upload_content_type_mismatch",
                f"This upload must be sent with Content-Type: {claims.content_type}.",
            )
        if announced_size is not None and announced_size > claims.max_size:
            raise UploadRejected(
                "upload_too_large", f"The file may be at most {claims.max_size} bytes."
            )
        if announced_size == 0:
            raise UploadRejected("upload_empty")
        if path.exists():
            raise BlobAlreadyExists()
        return claims

    async def receive_upload(self, claims: UploadClaims, chunks: AsyncIterable[bytes]) -> int:
        """Stream ``chunks`` into place for an authorized upload; returns the size.

        The byte count is checked as chunks arrive, and the upload is abandoned
        (partial file removed) the moment it passes ``claims.max_size``.
        """
        path = self.path_for(claims.key)
        await anyio.to_thread.run_sync(lambda: path.parent.mkdir(parents=True, exist_ok=True))
        part = _new_part_path(path)
        size = 0
        try:
            async with await anyio.open_file(part, "xb") as file:
                async for chunk in chunks:
                    size += len(chunk)
                    if size > claims.max_size:
                        raise UploadRejected(
                            "upload_too_large",
                            f"The file may be at most {claims.max_size} bytes.",
                        )
                    await file.write(chunk)
                if size == 0:
                    raise UploadRejected("upload_empty")
                await file.flush()
                await anyio.to_thread.run_sync(os.fsync, file.wrapped.fileno())
            await anyio.to_thread.run_sync(self._commit_upload, part, path, claims.content_type)
        finally:
            await anyio.to_thread.run_sync(lambda: part.unlink(missing_ok=True))
        return size

    def verify_download(self, key: str, token: str | None) -> DownloadClaims:
        """Claims of a valid download token for ``key``; raises DownloadRejected."""
        self.path_for(key)
        return self._signer.verify_download(token, key=key, now=self._clock())

    def open_download(self, key: str) -> LocalFile:
        """The stored file for ``key``; raises BlobNotFound."""
        path = self.path_for(key)
        try:
            return LocalFile(path, path.stat().st_size)
        except FileNotFoundError:
            raise BlobNotFound(f"No file is stored under {key!r}.") from None

    # -- internals -------------------------------------------------------------------

    def _commit_upload(self, part: Path, path: Path, content_type: str) -> None:
        """Link the finished part into place (atomic, and refuses to replace an
        existing file), then record its content type."""
        try:
            os.link(part, path)
        except FileExistsError:
            raise BlobAlreadyExists() from None
        self._write_content_type(path, content_type)

    def _url_for(self, key: str) -> str:
        return f"{self.public_base_url}{LOCAL_BLOB_ROUTE_PATH}/{quote(key, safe='/')}"

    @staticmethod
    def _write_content_type(path: Path, content_type: str) -> None:
        meta = _meta_path(path)
        part = _new_part_path(path)
        try:
            part.write_text(json.dumps({"content_type": content_type}), encoding="utf-8")
            part.replace(meta)
        finally:
            part.unlink(missing_ok=True)

    @staticmethod
    def _read_content_type(path: Path) -> str | None:
        meta: object = None
        with contextlib.suppress(FileNotFoundError, ValueError):
            meta = json.loads(_meta_path(path).read_text(encoding="utf-8"))
        value = meta.get("content_type") if isinstance(meta, dict) else None
        return value if isinstance(value, str) else None


def _meta_path(path: Path) -> Path:
    return path.with_name(f".{path.name}.meta.json")


def _new_part_path(path: Path) -> Path:
    return path.with_name(f"{_PART_PREFIX}{secrets.token_hex(8)}{_PART_SUFFIX}")
