"""``shortlist sync`` against a running service: the same plan, carried out over REST.

:func:`service.services.folder_sync.sync` decides what each file needs, exactly as for a local
sync; :class:`RemoteTarget` does it with the public API and the caller's ``SHORTLIST_TOKEN``:
the synced documents (with their paths and hashes) from ``GET …/documents``, new and changed
files through the upload grant flow (a changed one as the document's new original, so it keeps
its id), moves with ``PUT /api/documents/{id}/sync`` and removals with ``DELETE``. Each stored
file is waited for until its extraction settles, so a failure is reported like a local one.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import anyio
import anyio.to_thread

from service.cli.client import ShortlistClient
from service.services.folder_sync import Report, Settled, Synced, sync
from service.services.folders import Found

#: Seconds between looks at a document whose extraction has not settled.
POLL_SECONDS = 0.25


class RemoteTarget:
    """A :class:`~service.services.folder_sync.SyncTarget` on a running service."""

    def __init__(self, client: ShortlistClient, project_id: str, *, wait_seconds: float) -> None:
        self.client, self.project_id, self.wait_seconds = client, project_id, wait_seconds

    async def synced(self) -> dict[str, Synced]:
        listed = await anyio.to_thread.run_sync(self.client.list_documents, self.project_id)
        found: dict[str, Synced] = {}
        for document in listed:
            mirrored = document.get("sync")
            if not mirrored:
                continue
            error = document.get("error") or {}
            found[mirrored["path"]] = Synced(
                UUID(document["id"]),
                document["name"],
                document["status"],
                error.get("code"),
                error.get("message"),
                mirrored["path"],
                mirrored.get("sha256"),
                mirrored.get("size"),
                mirrored.get("mtime_ns"),
            )
        return found

    def check(self, item: Found) -> None:
        """Nothing to check here: the service's grant refuses a file before any byte is sent."""

    async def follow(self, document: Synced, item: Found, name: str) -> None:
        def call() -> None:
            self.client.follow(
                str(document.id), path=item.key, name=name, size=item.size, mtime_ns=item.mtime_ns
            )

        await anyio.to_thread.run_sync(call)

    async def add(self, item: Found, sha: str) -> Settled:
        return await self._store(item, sha, name=item.key, replaces=None)

    async def replace(self, document: Synced, item: Found, sha: str) -> Settled:
        return await self._store(item, sha, name=document.name, replaces=str(document.id))

    async def remove(self, document: Synced) -> None:
        await anyio.to_thread.run_sync(self.client.delete_document, str(document.id))

    async def _store(self, item: Found, sha: str, *, name: str, replaces: str | None) -> Settled:
        mirrored = {"path": item.key, "sha256": sha, "size": item.size, "mtime_ns": item.mtime_ns}

        def call() -> dict[str, Any]:
            document = self.client.upload(
                self.project_id, item.path, name=name, sync=mirrored, replaces=replaces
            )
            return self.client.wait(
                document["id"], timeout=self.wait_seconds, interval=POLL_SECONDS
            )

        settled = await anyio.to_thread.run_sync(call)
        error = settled.get("error") or {}
        return Settled(settled["name"], settled["status"], error.get("code"), error.get("message"))


def sync_remote(
    base_url: str,
    token: str,
    project: str | None,
    roots: Sequence[Path],
    *,
    wait_seconds: float = 600.0,
) -> Report:
    """Mirror ``roots`` into the project (name, id, or the default rule) of the service at
    ``base_url``, acting with ``token``."""
    with ShortlistClient(base_url, token) as client:
        target = client.resolve_project(project)
        remote = RemoteTarget(client, str(target["id"]), wait_seconds=wait_seconds)
        return anyio.run(sync, remote, list(roots))
