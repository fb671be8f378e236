"""A small HTTP client for the three-step upload, as `shortlist upload` (and any script) uses it.

It speaks only the public REST API: ask for a grant, send the bytes straight to
the blob store the grant names (S3 presigned POST, S3 parts, or the local
store's PUT), register the document, and optionally wait until it is ready or
failed. The parts of a MULTIPART grant go up a few at a time; a part that fails
for a passing reason (connection lost, 5xx, 429) is sent again on its own.
"""

from __future__ import annotations

import mimetypes
import threading
import time
from collections.abc import Callable, Iterator
from concurrent import futures
from pathlib import Path
from typing import IO, Any, cast

import httpx

from service.errors import ComponentError, ServiceUnreachable
from service.services.projects import default_project

ProgressCallback = Callable[[int], None]
"""Called with the number of bytes just sent (negative when a failed part's bytes are
taken back before it is sent again)."""
_CHUNK = 256 * 1024
_RETRYABLE_STATUSES = frozenset({408, 429, 500, 502, 503, 504})


class ShortlistClient:
    def __init__(
        self,
        base_url: str,
        token: str,
        *,
        timeout: float = 60.0,
        part_concurrency: int = 4,
        part_attempts: int = 4,
        retry_wait: float = 0.5,
    ) -> None:
        """Args:
        base_url: The service, e.g. ``http://127.0.0.1:8000``.
        token: An API token.
        timeout: Seconds to wait for each HTTP response.
        part_concurrency: Parts of a MULTIPART upload in flight at once.
        part_attempts: Tries per part, the first included.
        retry_wait: Seconds before the second try of a part; doubled after each failure.
        """
        self.part_concurrency = part_concurrency
        self.part_attempts = part_attempts
        self.retry_wait = retry_wait
        self.base_url = base_url.rstrip("/")
        self.http = httpx.Client(
            base_url=self.base_url, headers={"Authorization": f"Bearer {token}"}, timeout=timeout
        )

    def close(self) -> None:
        self.http.close()

    def _request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        """A request to the service; a service that is not there is ServiceUnreachable."""
        try:
            return self.http.request(method, url, **kwargs)
        except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
            raise ServiceUnreachable(self.base_url) from exc

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

    def me(self) -> dict[str, Any]:
        """``GET /api/me``: the token's user and its ``scope``."""
        found: dict[str, Any] = self._json(self._request("GET", "/api/me"))
        return found

    def resolve_project(self, name_or_id: str | None) -> dict[str, Any]:
        """The project named (id or name), else the service's default rule
        (:func:`service.services.projects.default_project`)."""
        projects: list[dict[str, Any]] = self._json(self._request("GET", "/api/projects"))[
            "projects"
        ]
        if name_or_id is None or not name_or_id.strip():
            return dict(default_project(projects, lambda project: str(project["name"])))
        for project in projects:
            if (
                name_or_id in (project["id"], project["name"])
                or project["name"].lower() == name_or_id.lower()
            ):
                return dict(project)
        raise ComponentError(404, "project_not_found", f"You have no project named {name_or_id!r}.")

    def import_url(
        self, project_id: str, url: str, *, filename: str | None = None
    ) -> dict[str, Any]:
        """Ask the service to import a document from a web address; returns it (pending)."""
        body: dict[str, Any] = {"url": url}
        if filename:
            body["filename"] = filename
        document: dict[str, Any] = self._json(
            self._request("POST", f"/api/projects/{project_id}/imports", json=body)
        )
        return document

    def search(self, project_id: str, query: str, *, top_k: int | None = None) -> bytes:
        """``POST /api/projects/{id}/search``: the answer's JSON, as the service sent it."""
        body: dict[str, Any] = {"query": query}
        if top_k is not None:
            body["top_k"] = top_k
        response = self._request("POST", f"/api/projects/{project_id}/search", json=body)
        self._json(response)  # raises the service's error, if any
        return response.content

    def page_image(self, path: str) -> bytes:
        """``GET /api/documents/{id}/pages/{n}/image…`` (``path`` with its query): the PNG."""
        response = self._request("GET", path)
        if response.status_code >= 400:
            self._json(response)  # raises the service's error
        return response.content

    def file_link(self, document_id: str) -> str:
        """``GET /api/documents/{id}/file``: a short-lived link to the original."""
        link: dict[str, Any] = self._json(
            self._request("GET", f"/api/documents/{document_id}/file")
        )
        return str(link["url"])

    def mentions(self, project_id: str, terms: list[str], match: str) -> bytes:
        """``GET /api/projects/{id}/mentions``: the answer's JSON, as the service sent it."""
        response = self._request(
            "GET", f"/api/projects/{project_id}/mentions", params={"terms": terms, "match": match}
        )
        self._json(response)
        return response.content

    def list_documents(self, project_id: str) -> list[dict[str, Any]]:
        """The project's documents (with ``sync`` for those a folder sync keeps)."""
        listed: list[dict[str, Any]] = self._json(
            self._request("GET", f"/api/projects/{project_id}/documents")
        )["documents"]
        return listed

    def upload(
        self,
        project_id: str,
        path: Path,
        *,
        name: str | None = None,
        on_progress: ProgressCallback | None = None,
        sync: dict[str, Any] | None = None,
        replaces: str | None = None,
    ) -> dict[str, Any]:
        """Grant, send, register; returns the document (status pending).

        ``name`` is the document's (the file's own name when not given; a file of a folder is
        named by its path under it). ``replaces`` (a document id) makes the file that
        document's new original instead of a new document (``name`` is then that document's);
        ``sync`` records the synced-folder file it mirrors.
        """
        size = path.stat().st_size
        content_type = mimetypes.guess_type(path.name)[0]
        grant = self._json(
            self._request(
                "POST",
                "/api/uploads",
                json={
                    "project_id": project_id,
                    "filename": name or path.name,
                    "content_type": content_type,
                    "size": size,
                    "replaces": replaces,
                },
            )
        )
        self._send(grant, path, on_progress)
        if replaces is not None:
            registered = self._request(
                "POST",
                f"/api/documents/{replaces}/original",
                json={"upload_id": grant["upload_id"], "sync": sync},
            )
        else:
            registered = self._request(
                "POST",
                "/api/documents",
                json={"project_id": project_id, "upload_id": grant["upload_id"], "sync": sync},
            )
        document: dict[str, Any] = self._json(registered)
        return document

    def follow(
        self, document_id: str, *, path: str, name: str, size: int, mtime_ns: int
    ) -> dict[str, Any]:
        """Point a synced document at its file's new path and name (same bytes)."""
        body = {"path": path, "name": name, "size": size, "mtime_ns": mtime_ns}
        document: dict[str, Any] = self._json(
            self._request("PUT", f"/api/documents/{document_id}/sync", json=body)
        )
        return document

    def delete_document(self, document_id: str) -> None:
        self._json(self._request("DELETE", f"/api/documents/{document_id}"))

    def _send(
        self, grant: dict[str, Any], path: Path, on_progress: ProgressCallback | None
    ) -> None:
        if grant["method"] == "MULTIPART":
            self._send_parts(grant, path, on_progress)
            return
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

    def _send_parts(
        self, grant: dict[str, Any], path: Path, on_progress: ProgressCallback | None
    ) -> None:
        """PUT every part to its own URL, a few at a time, each retried on its own; once a
        part has failed for good, parts not yet started are dropped and no part is retried."""
        report = _locked(on_progress)
        failed = threading.Event()

        def send(store: httpx.Client, part: dict[str, Any]) -> None:
            try:
                self._send_part(store, grant["headers"], part, path, report, failed)
            except BaseException:
                failed.set()  # before this thread can take another part
                raise

        with (
            httpx.Client(timeout=self.http.timeout) as store,
            futures.ThreadPoolExecutor(max_workers=max(1, self.part_concurrency)) as pool,
        ):
            sends = [pool.submit(send, store, part) for part in grant["parts"]]
            done, _ = futures.wait(sends, return_when=futures.FIRST_EXCEPTION)
            problems = [sent for sent in done if sent.exception() is not None]
            if problems:
                for sent in sends:
                    sent.cancel()
                problems[0].result()

    def _send_part(
        self,
        store: httpx.Client,
        headers: dict[str, str],
        part: dict[str, Any],
        path: Path,
        report: ProgressCallback | None,
        failed: threading.Event,
    ) -> None:
        with path.open("rb") as handle:
            handle.seek(part["offset"])
            data = handle.read(part["size"])
        wait = self.retry_wait
        for attempt in range(1, self.part_attempts + 1):
            if failed.is_set():
                return  # another part failed for good: the upload has failed already
            sent = 0

            def counted() -> Iterator[bytes]:
                nonlocal sent
                for start in range(0, len(data), _CHUNK):
                    chunk = data[start : start + _CHUNK]
                    sent += len(chunk)
                    if report:
                        report(len(chunk))
                    yield chunk

            problem: str
            try:
                response = store.put(
                    part["url"],
                    content=counted(),
                    headers={**headers, "Content-Length": str(len(data))},
                )
            except httpx.TransportError as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code < 300:
                    return
                problem = f"{response.status_code} {response.text[:300]}"
                if response.status_code not in _RETRYABLE_STATUSES:
                    raise ComponentError(
                        response.status_code,
                        "upload_rejected_by_store",
                        f"The blob store refused part {part['number']}: {problem}",
                    )
            if report and sent:
                report(-sent)
            if attempt == self.part_attempts:
                raise ComponentError(
                    502,
                    "upload_part_failed",
                    f"Part {part['number']} failed {attempt} times; the last: {problem}",
                )
            time.sleep(wait)
            wait *= 2

    def wait(
        self,
        document_id: str,
        *,
        timeout: float = 600.0,
        interval: float = 1.0,
        on_update: Callable[[dict[str, Any]], None] | None = None,
    ) -> dict[str, Any]:
        """Poll until the document is ready or failed (or the timeout passes); ``on_update``
        sees the document as each poll finds it (its ``progress`` while it is extracted)."""
        deadline = time.monotonic() + timeout
        while True:
            document: dict[str, Any] = self._json(
                self._request("GET", f"/api/documents/{document_id}")
            )
            if on_update is not None:
                on_update(document)
            if document["status"] in ("ready", "error") or time.monotonic() > deadline:
                return document
            time.sleep(interval)


def _locked(on_progress: ProgressCallback | None) -> ProgressCallback | None:
    """``on_progress`` made safe to call from the part-sending threads."""
    if on_progress is None:
        return None
    lock = threading.Lock()

    def report(count: int) -> None:
        with lock:
            on_progress(count)

    return report


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
