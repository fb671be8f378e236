"""Make a project mirror the supported files under some folders (``shortlist sync``).

:func:`service.services.folders.scan` walks the folders (the walker ``upload`` and ``ingest``
use too): dot-files and dot-folders, Office lock files (``~$…``), symbolic links, what a root's
``.shortlistignore`` excludes and files of unsupported kinds are *ignored*. Each file found is
named by its path under the folder (``a/notes.md``; with several folders, after its folder's
label), so files of the same name in different folders are different documents.
:func:`sync_folders` compares what it found with the project's synced documents (each
remembers its path under the folder, its bytes' SHA-256 and the size and mtime it had when
last read):

- same path, same size and mtime: *unchanged*, without reading the file;
- same path, other bytes: *updated* — the new original is stored and extracted again, the
  document keeps its id; same bytes (only touched): unchanged, the new mtime remembered;
- a new path whose bytes are those of a synced document whose file is gone: the document
  is *moved* (renamed) and keeps its extraction; counted as updated;
- a new path otherwise: *added*, like ``shortlist ingest``;
- a synced document whose file is gone: *removed*, with its original.

A file that cannot be read, stored or extracted is *failed* with its reason (a document
whose extraction failed stays failed on later syncs until its file changes).
Documents the project got any other way (uploads, imports) are never touched.

:func:`sync` makes these decisions once, for any :class:`SyncTarget`: :class:`LocalTarget`
stores and extracts on this process's runtime (:func:`sync_folders`, the embedded defaults or
``DATABASE_URL``); ``service.cli.remote_sync.RemoteTarget`` asks a running service over REST
(the grant flow, ``PUT /api/documents/{id}/sync``, ``POST /api/documents/{id}/original``).
"""

from __future__ import annotations

import contextlib
import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol
from uuid import UUID

import anyio.to_thread

from extract.detect import EXTENSION_KINDS, KIND_CONTENT_TYPES
from service.errors import InvalidRequest, ShortlistError, SyncPathTaken
from service.records import Document, Principal, SyncedFile
from service.services import documents, folders, projects, scopes, synced_files, uploads
from service.services.extraction import Outcome, extract_and_save
from service.services.filenames import clean_filename
from service.services.folders import Found
from service.services.ingest import store_new_document
from service.storage.blobs import BlobStoreError
from service.storage.db import (
    Connection,
    connection,
    execute,
    fetch_all,
    fetch_one,
    unique_violation_as,
)

if TYPE_CHECKING:
    from service.runtime import Runtime

Action = Literal["added", "updated", "unchanged", "removed", "ignored", "failed"]
ACTIONS: tuple[Action, ...] = ("added", "updated", "unchanged", "removed", "ignored", "failed")


class Entry(NamedTuple):
    """One line of the report: a file (or document) and what happened to it."""

    action: Action
    path: str
    name: str | None = None
    reason: str | None = None
    moved_from: str | None = None


@dataclass
class Report:
    entries: list[Entry] = field(default_factory=list)

    def add(self, entry: Entry) -> None:
        self.entries.append(entry)

    def counts(self) -> dict[str, int]:
        return {action: sum(e.action == action for e in self.entries) for action in ACTIONS}

    @property
    def failed(self) -> bool:
        return any(entry.action == "failed" for entry in self.entries)


class Synced(NamedTuple):
    """What the last sync recorded of one document's file."""

    id: UUID
    name: str
    status: str
    error_code: str | None
    error_message: str | None
    path: str
    sha256: str | None
    size: int | None
    mtime_ns: int | None


class Settled(NamedTuple):
    """What became of a file a target stored: its document's name and final status."""

    name: str
    status: str
    error_code: str | None = None
    error_message: str | None = None


class SyncTarget(Protocol):
    """Where a sync's decisions are carried out: the local runtime (:class:`LocalTarget`) or a
    running service over REST (``service.cli.remote_sync.RemoteTarget``). :func:`sync_folders`
    decides; a target only does what it is told."""

    async def synced(self) -> dict[str, Synced]:
        """The project's synced documents by path."""
        ...

    def check(self, item: Found) -> None:
        """Refuse a file before it is read, when the target can tell (size, kind, name)."""
        ...

    async def follow(self, document: Synced, item: Found, name: str) -> None:
        """Point the document at ``item`` (same bytes): new path, name, size and mtime."""
        ...

    async def add(self, item: Found, sha: str) -> Settled:
        """Store ``item`` as a new document mirroring it, extracted (or failed)."""
        ...

    async def replace(self, document: Synced, item: Found, sha: str) -> Settled:
        """Store ``item`` as the document's new original and extract it again."""
        ...

    async def remove(self, document: Synced) -> None:
        """Delete the document and its original."""
        ...


def _content_type(name: str) -> str:
    return KIND_CONTENT_TYPES[EXTENSION_KINDS[PurePosixPath(name).suffix.lower()]]


def _sha256(path: Path) -> str:
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _settled_entry(action: Action, item: Found, settled: Settled) -> Entry:
    if settled.status == "error":
        reason = f"{settled.error_code}: {settled.error_message}"
        return Entry("failed", item.key, settled.name, reason)
    return Entry(action, item.key, settled.name)


async def sync_folders(
    runtime: Runtime, principal: Principal, project_id: UUID, roots: Sequence[Path]
) -> Report:
    """Mirror the supported files under ``roots`` into the caller's project, on this runtime."""
    scopes.require_write(principal)
    async with connection(runtime.pool) as conn:
        await projects.get_project(conn, principal.user_id, project_id)
    return await sync(LocalTarget(runtime, principal, project_id), roots)


async def sync(target: SyncTarget, roots: Sequence[Path]) -> Report:
    """The plan, the same for every target: compare the folders with the synced documents and
    tell ``target`` what to add, replace, follow or remove; report what happened to each."""
    synced = await target.synced()
    found = await anyio.to_thread.run_sync(folders.scan, list(roots))
    report = Report()
    for skipped in found.ignored:
        report.add(Entry("ignored", skipped.key, reason=skipped.reason))

    on_disk = {item.key for item in found.files}
    gone = {key: doc for key, doc in synced.items() if key not in on_disk}
    gone_by_hash = {doc.sha256: doc for doc in gone.values() if doc.sha256}
    for item in found.files:
        try:
            synced_files.check_synced_file(item.key, item.size, item.mtime_ns)
            entry = await _sync_one(target, item, synced.get(item.key), gone_by_hash)
        except (ShortlistError, OSError) as exc:
            reason = exc.message if isinstance(exc, ShortlistError) else str(exc)
            entry = Entry("failed", item.key, reason=reason)
        if entry.moved_from is not None:
            gone.pop(entry.moved_from, None)
        report.add(entry)
    for key, doc in gone.items():
        try:
            await target.remove(doc)
        except ShortlistError as exc:
            report.add(Entry("failed", key, doc.name, exc.message))
            continue
        report.add(Entry("removed", key, doc.name))
    report.entries.sort(key=lambda entry: (ACTIONS.index(entry.action), entry.path))
    return report


async def _sync_one(
    target: SyncTarget, item: Found, known: Synced | None, gone_by_hash: dict[str, Synced]
) -> Entry:
    if known is not None and (known.size, known.mtime_ns) == (item.size, item.mtime_ns):
        return _as_it_stands(known, item)
    # The size rule (and name and kind) before reading: a huge file is refused unread.
    target.check(item)
    sha = await anyio.to_thread.run_sync(_sha256, item.path)
    if known is not None and known.sha256 == sha:
        await target.follow(known, item, known.name)
        return _as_it_stands(known, item)
    if known is not None:
        return _settled_entry("updated", item, await target.replace(known, item, sha))
    moved = gone_by_hash.pop(sha, None)
    if moved is not None:
        await target.follow(moved, item, item.key)
        return Entry("updated", item.key, item.key, moved_from=moved.path)
    return _settled_entry("added", item, await target.add(item, sha))


def _as_it_stands(known: Synced, item: Found) -> Entry:
    """An unchanged file: unchanged, or still failed if its extraction failed."""
    if known.status == "error":
        return Entry("failed", item.key, known.name, f"{known.error_code}: {known.error_message}")
    return Entry("unchanged", item.key, known.name)


async def follow_file(
    conn: Connection,
    principal: Principal,
    document_id: UUID,
    *,
    path: str,
    name: str,
    size: int | None,
    mtime_ns: int | None,
) -> Document:
    """A synced document follows its file (same bytes) to ``path`` under ``name``, keeping its
    extraction: a move or rename, or only a new size and mtime. The one way every target
    records it (``PUT /api/documents/{id}/sync`` too)."""
    scopes.require_write(principal)
    path = synced_files.check_synced_file(path, size, mtime_ns)
    document = await documents.get_document(conn, principal, document_id)
    if document.sync is None:
        raise InvalidRequest(
            f"{document.name!r} does not mirror a file of a synced folder.",
            document=str(document_id),
        )
    clean = clean_filename(name)
    if clean.casefold() != document.name.strip().casefold():
        await uploads.ensure_name_is_free(conn, document.project_id, clean)
    with unique_violation_as(
        SyncPathTaken(f"Another document of the project already mirrors {path!r}.")
    ):
        await execute(
            conn,
            "move_synced_document",
            document_id=document.id,
            sync_path=path,
            name=clean,
            sync_size=size,
            sync_mtime_ns=mtime_ns,
        )
    return await documents.get_document(conn, principal, document.id)


class LocalTarget:
    """The sync carried out on this process's runtime: stored and extracted here, at once."""

    def __init__(self, runtime: Runtime, principal: Principal, project_id: UUID) -> None:
        self.runtime, self.principal, self.project_id = runtime, principal, project_id

    async def synced(self) -> dict[str, Synced]:
        async with connection(self.runtime.pool) as conn:
            rows = await fetch_all(conn, "list_synced_documents", project_id=self.project_id)
        return {
            row["sync_path"]: Synced(
                row["id"],
                row["name"],
                row["status"],
                row["error_code"],
                row["error_message"],
                row["sync_path"],
                row["original_sha256"],
                row["sync_size"],
                row["sync_mtime_ns"],
            )
            for row in rows
        }

    def check(self, item: Found) -> None:
        uploads.check_file(self.runtime, item.key, _content_type(item.key), item.size)

    async def follow(self, document: Synced, item: Found, name: str) -> None:
        async with connection(self.runtime.pool) as conn:
            await follow_file(
                conn,
                self.principal,
                document.id,
                path=item.key,
                name=name,
                size=item.size,
                mtime_ns=item.mtime_ns,
            )

    async def add(self, item: Found, sha: str) -> Settled:
        runtime = self.runtime
        data = await anyio.to_thread.run_sync(item.path.read_bytes)
        name = item.key
        mirrored = SyncedFile(path=item.key, sha256=sha, size=item.size, mtime_ns=item.mtime_ns)
        document = await store_new_document(
            runtime, self.project_id, data, name, _content_type(name), sync=mirrored
        )
        outcome = await extract_and_save(
            runtime, document.id, data, document.name, document.content_type
        )
        return _settled(document.name, outcome)

    async def replace(self, document: Synced, item: Found, sha: str) -> Settled:
        runtime = self.runtime
        data = await anyio.to_thread.run_sync(item.path.read_bytes)
        _, content_type = uploads.check_file(
            runtime, document.name, _content_type(document.name), len(data)
        )
        key = uploads.object_key(self.project_id, uuid.uuid4())
        await anyio.to_thread.run_sync(lambda: runtime.blobs.write(key, data, content_type))
        async with connection(runtime.pool) as conn:
            old = await fetch_one(conn, "fetch_document_object_key", document_id=document.id)
            await execute(
                conn,
                "replace_synced_original",
                document_id=document.id,
                object_key=key,
                content_type=content_type,
                size_bytes=len(data),
                original_sha256=sha,
                sync_size=item.size,
                sync_mtime_ns=item.mtime_ns,
            )
        if old is not None and old["object_key"] and old["object_key"] != key:
            with contextlib.suppress(BlobStoreError):  # an orphaned original is only storage
                await anyio.to_thread.run_sync(runtime.blobs.delete, old["object_key"])
        outcome = await extract_and_save(runtime, document.id, data, document.name, content_type)
        return _settled(document.name, outcome)

    async def remove(self, document: Synced) -> None:
        await documents.delete_document(self.runtime, self.principal, document.id)


def _settled(name: str, outcome: Outcome) -> Settled:
    return Settled(name, outcome.status, outcome.error_code, outcome.error_message)


def report_json(report: Report) -> dict[str, object]:
    """``{"added": n, …, "failed": n, "details": {action: [entries]}}``."""
    details: dict[str, list[dict[str, str]]] = {action: [] for action in ACTIONS}
    for entry in report.entries:
        shown = {"path": entry.path}
        if entry.name is not None:
            shown["name"] = entry.name
        if entry.reason is not None:
            shown["reason"] = entry.reason
        if entry.moved_from is not None:
            shown["moved_from"] = entry.moved_from
        details[entry.action].append(shown)
    return {**report.counts(), "details": details}
