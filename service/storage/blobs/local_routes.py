"""HTTP routes of the built-in blob store: the browser's upload target and file downloads.

Mount ``local_blob_router(store)`` at the app's top level. Its handlers carry
``opt={"exclude_from_auth": True}``: the signed grant or download token in the
query string *is* the authorization, so no Bearer token is expected (keep them
outside any auth middleware, or let that middleware honour the opt key).

- ``PUT /blobs/{key}?grant=…`` — raw body, ``Content-Type`` as granted; 201
  ``{"key", "size"}``. The body is streamed to disk and abandoned with 413 as soon
  as it passes the grant's size (the app-wide ``request_max_body_size`` is lifted
  for this handler only; the grant's limit applies instead).
  When the app passes ``grant_withdrawn``, a grant it reports withdrawn (its document
  was deleted) is refused with 403 ``upload_revoked`` before any byte is read.
- ``GET /blobs/{key}?download=…`` — the file, as the token's type and disposition, with
  ``ORIGINAL_RESPONSE_HEADERS`` (sandboxed, never sniffed); single ``Range`` supported.

Errors are the JSON envelope ``{"status", "code", "message"}``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any, NamedTuple

import anyio
from litestar import MediaType, Request, Response, Router, get, put
from litestar.params import FromPath, FromQuery
from litestar.response import Stream

from service.storage.blobs.disposition import ORIGINAL_RESPONSE_HEADERS, content_disposition
from service.storage.blobs.errors import BlobStoreError, RangeNotSatisfiable, UploadRejected
from service.storage.blobs.local import LOCAL_BLOB_ROUTE_PATH, LocalBlobStore

_READ_CHUNK = 256 * 1024
_SINGLE_RANGE = re.compile(r"bytes=(\d*)-(\d*)", re.ASCII)

#: Whether the grant for a key was withdrawn, asked with the request being served.
GrantWithdrawn = Callable[[Request[Any, Any, Any], str], Awaitable[bool]]


class ByteRange(NamedTuple):
    """Inclusive byte positions of a satisfiable range."""

    first: int
    last: int


def local_blob_router(
    store: LocalBlobStore, *, grant_withdrawn: GrantWithdrawn | None = None
) -> Router:
    """The ``/blobs`` routes serving ``store``; ``grant_withdrawn`` refuses deleted grants."""

    @put(
        "/{key:path}",
        status_code=201,
        request_max_body_size=None,
        opt={"exclude_from_auth": True},
        operation_id="PutLocalBlob",
        include_in_schema=False,
    )
    async def put_blob(
        request: Request[Any, Any, Any], key: FromPath[str], grant: FromQuery[str | None] = None
    ) -> dict[str, Any]:
        """Receive an upload the grant allows.

        Args:
            request: The raw request; its body is the file.
            key: Where the file goes, as the grant names it.
            grant: The signed upload grant.

        Returns:
            The key and the number of bytes stored.
        """
        key = key.removeprefix("/")  # the path parameter keeps the separating slash
        claims = store.authorize_upload(
            key,
            grant=grant,
            content_type=request.headers.get("content-type"),
            announced_size=_content_length(request),
        )
        if grant_withdrawn is not None and await grant_withdrawn(request, key):
            raise UploadRejected("upload_revoked")
        size = await store.receive_upload(claims, request.stream())
        return {"key": key, "size": size}

    @get(
        "/{key:path}",
        opt={"exclude_from_auth": True},
        operation_id="GetLocalBlob",
        include_in_schema=False,
    )
    async def get_blob(
        request: Request[Any, Any, Any],
        key: FromPath[str],
        download: FromQuery[str | None] = None,
    ) -> Stream:
        """Serve a file, as its token says, to the holder of a download token.

        Args:
            request: Read for its ``Range`` header.
            key: The file's key.
            download: The signed download token.

        Returns:
            The file (or the requested range of it).
        """
        key = key.removeprefix("/")  # the path parameter keeps the separating slash
        claims = store.verify_download(key, download)
        stored = store.open_download(key)
        headers = {
            **ORIGINAL_RESPONSE_HEADERS,
            "Content-Disposition": content_disposition(claims.disposition, claims.filename),
            "Accept-Ranges": "bytes",
        }
        byte_range = parse_range(request.headers.get("range"), stored.size)
        if byte_range is None:
            first, last, status = 0, stored.size - 1, 200
        else:
            first, last, status = byte_range.first, byte_range.last, 206
            headers["Content-Range"] = f"bytes {first}-{last}/{stored.size}"
        headers["Content-Length"] = str(last - first + 1)
        return Stream(
            _read_file(stored.path, first, last),
            status_code=status,
            media_type=claims.content_type,
            headers=headers,
        )

    return Router(
        path=LOCAL_BLOB_ROUTE_PATH,
        route_handlers=[put_blob, get_blob],
        exception_handlers={BlobStoreError: _error_response},
    )


def parse_range(header: str | None, size: int) -> ByteRange | None:
    """The single ``bytes=`` range of a ``Range`` header, or None to send the whole file.

    Multi-range and malformed headers are ignored (RFC 9110 allows serving the
    whole file); a range starting past the end raises RangeNotSatisfiable.
    """
    match = _SINGLE_RANGE.fullmatch(header.strip()) if header else None
    if match is None or match.group(1) == match.group(2) == "":
        return None
    start_text, end_text = match.groups()
    if not start_text:
        suffix = int(end_text)
        if suffix == 0 or size == 0:
            raise RangeNotSatisfiable()
        return ByteRange(max(size - suffix, 0), size - 1)
    first = int(start_text)
    last = min(int(end_text), size - 1) if end_text else size - 1
    if first >= size:
        raise RangeNotSatisfiable()
    if last < first:
        return None
    return ByteRange(first, last)


async def _read_file(path: Path, first: int, last: int) -> AsyncIterator[bytes]:
    remaining = last - first + 1
    async with await anyio.open_file(path, "rb") as file:
        await file.seek(first)
        while remaining > 0:
            chunk = await file.read(min(_READ_CHUNK, remaining))
            if not chunk:
                break
            remaining -= len(chunk)
            yield chunk


def _content_length(request: Request[Any, Any, Any]) -> int | None:
    value = request.headers.get("content-length")
    return int(value) if value is not None and value.isascii() and value.isdigit() else None


def _error_response(request: Request[Any, Any, Any], exc: BlobStoreError) -> Response[Any]:
    # A refused upload may leave most of its body unsent: closing the connection stops
    # the client from pushing (and the server from draining) the rest.
    headers = {"Connection": "close"} if request.method == "PUT" else None
    return Response(
        content=exc.to_dict(), status_code=exc.status, media_type=MediaType.JSON, headers=headers
    )
