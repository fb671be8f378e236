"""A small HTTP client for the three-step upload, as `shortlist upload` (and any script) uses it.

It speaks only the public REST API: ask for a grant, send the bytes straight to
the blob store the grant names (S3 presigned POST or the local store's PUT),
register the document, and optionally wait until it is ready or failed.
"""

from __future__ import annotations

import mimetypes
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, cast

import httpx

from service.errors import ComponentError

ProgressCallback = Callable[[int], None]
_CHUNK = 256 * 1024


class ShortlistClient:
    def __init__(self, base_url: str, token: str, *, timeout: float = 60.0) -> None:
        self.base_url = base_url.rstrip("/")
        self.http = httpx.Client(
            base_url=self.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> ShortlistClient:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def _json(self, response: httpx.Response) -> Any:
        if response.status_code >= 400:
            try:
                body = response.json()
                raise ComponentError(response.status_code, body["code"], body["message"])
            except (ValueError, KeyError, TypeError):
                raise ComponentError(
                    response.status_code, "http_error", response.text[:200]
                ) from None
        return response.json() if response.content else None

    def find_project(self, name_or_id: str) -> dict[str, Any]:
        projects = self._json(self.http.get("/api/projects"))["projects"]
        for project in projects:
            if (
                name_or_id in (project["id"], project["name"])
                or project["name"].lower() == name_or_id.lower()
            ):
                return dict(project)
        raise ComponentError(404, "project_not_found", f"You have no project named {name_or_id!r}.")

    def upload(
        self, project_id: str, path: Path, *, on_progress: ProgressCallback | None = None
    ) -> dict[str, Any]:
        """Grant, send, register; returns the new document (status pending)."""
        size = path.stat().st_size
        content_type = mimetypes.guess_type(path.name)[0]
        grant = self._json(
            self.http.post(
                "/api/uploads",
                json={
                    "project_id": project_id,
                    "filename": path.name,
                    "content_type": content_type,
                    "size": size,
                },
            )
        )
        self._send(grant, path, on_progress)
        document: dict[str, Any] = self._json(
            self.http.post(
                "/api/documents", json={"project_id": project_id, "upload_id": grant["upload_id"]}
            )
        )
        return document

    def _send(
        self, grant: dict[str, Any], path: Path, on_progress: ProgressCallback | None
    ) -> None:
        # The blob store is not our API: no bearer token goes to it.
        with httpx.Client(timeout=self.http.timeout) as store, path.open("rb") as handle:
            if grant["method"] == "PUT":
                response = store.put(
                    grant["url"], content=_read(handle, on_progress), headers=grant["headers"]
                )
            else:
                reader = cast(IO[bytes], _Reader(handle, on_progress))
                files = {"file": (path.name, reader, grant["fields"].get("Content-Type"))}
                response = store.post(grant["url"], data=grant["fields"], files=files)
        if response.status_code >= 300:
            raise ComponentError(
                response.status_code,
                "upload_rejected_by_store",
                f"The blob store refused the upload: {response.text[:300]}",
            )

    def wait(
        self, document_id: str, *, timeout: float = 600.0, interval: float = 1.0
    ) -> dict[str, Any]:
        """Poll until the document is ready or failed (or the timeout passes)."""
        deadline = time.monotonic() + timeout
        while True:
            document: dict[str, Any] = self._json(self.http.get(f"/api/documents/{document_id}"))
            if document["status"] in ("ready", "error") or time.monotonic() > deadline:
                return document
            time.sleep(interval)


def _read(handle: Any, on_progress: ProgressCallback | None) -> Iterator[bytes]:
    while chunk := handle.read(_CHUNK):
        if on_progress:
            on_progress(len(chunk))
        yield chunk


class _Reader:
    """A file wrapper that reports how many bytes httpx has read from it."""

    def __init__(self, handle: Any, on_progress: ProgressCallback | None) -> None:
        self.handle = handle
        self.on_progress = on_progress

    def read(self, size: int = -1) -> bytes:
        chunk: bytes = self.handle.read(size)
        if chunk and self.on_progress:
            self.on_progress(len(chunk))
        return chunk
