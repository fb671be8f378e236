"""Make a project mirror the supported files under some folders (``shortlist sync``).

:func:`scan` walks the folders: dot-files and dot-folders, Office lock files (``~$…``), what
a root's ``.shortlistignore`` (gitignore syntax, read with ``pathspec``) excludes and files
of unsupported kinds are *ignored*. :func:`sync_folders` compares what it found with the
project's synced documents (each remembers its path under the folder, its bytes' SHA-256
and the size and mtime it had when last read):

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
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Literal, NamedTuple
from uuid import UUID

import anyio.to_thread
import pathspec

from extract.detect import EXTENSION_KINDS, KIND_CONTENT_TYPES
from service.errors import ShortlistError
from service.records import Principal
from service.services import documents, projects, scopes, uploads
from service.services.extraction import Outcome, extract_and_save
from service.services.ingest import store_new_document
from service.storage.blobs import BlobStoreError
from service.storage.db import connection, execute, fetch_all, fetch_one

if TYPE_CHECKING:
    from service.runtime import Runtime

IGNORE_FILE = ".shortlistignore"
"""A root's file of gitignore-style patterns of what not to sync."""
LOCK_FILE_PREFIX = "~$"
"""Office's lock files (``~$report.docx``) while a document is open."""

Action = Literal["added", "updated", "unchanged", "removed", "ignored", "failed"]
ACTIONS: tuple[Action, ...] = ("added", "updated", "unchanged", "removed", "ignored", "failed")


class Found(NamedTuple):
    """A file to mirror: where it is, and its key (path under the folder, ``/``-separated)."""

    path: Path
    key: str
    size: int
    mtime_ns: int


class Skipped(NamedTuple):
    key: str
    reason: str


@dataclass
class Scan:
    files: list[Found] = field(default_factory=list)
    ignored: list[Skipped] = field(default_factory=list)


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


def _ignore_spec(root: Path) -> pathspec.GitIgnoreSpec:
    ignore = root / IGNORE_FILE
    lines = ignore.read_text(encoding="utf-8").splitlines() if ignore.is_file() else []
    return pathspec.GitIgnoreSpec.from_lines(lines)


def scan(roots: Sequence[Path]) -> Scan:
    """The files under ``roots`` to mirror, and the ones left out with why.

    With several roots each key starts with its root's folder name, so two roots cannot
    collide. Symbolic links are not followed out of a root.
    """
    found = Scan()
    for root in roots:
        root = root.resolve()
        spec = _ignore_spec(root)
        prefix = f"{root.name}/" if len(roots) > 1 else ""
        for folder, dirs, files in os.walk(root):
            base = Path(folder)
            relative_dir = base.relative_to(root).as_posix()
            kept_dirs = []
            for name in sorted(dirs):
                rel = name if relative_dir == "." else f"{relative_dir}/{name}"
                if name.startswith(".") or spec.match_file(rel + "/"):
                    found.ignored.append(Skipped(prefix + rel + "/", "ignored folder"))
                else:
                    kept_dirs.append(name)
            dirs[:] = kept_dirs
            for name in sorted(files):
                rel = name if relative_dir == "." else f"{relative_dir}/{name}"
                key = prefix + rel
                reason = _skip_reason(base / name, name, rel, spec)
                if reason is not None:
                    if name != IGNORE_FILE:
                        found.ignored.append(Skipped(key, reason))
                    continue
                stat = (base / name).stat()
                found.files.append(Found(base / name, key, stat.st_size, stat.st_mtime_ns))
    return found


def _skip_reason(path: Path, name: str, rel: str, spec: pathspec.GitIgnoreSpec) -> str | None:
    if name.startswith("."):
        return "dot-file"
    if name.startswith(LOCK_FILE_PREFIX):
        return "Office lock file"
    if spec.match_file(rel):
        return f"excluded by {IGNORE_FILE}"
    if path.is_symlink() or not path.is_file():
        return "not a regular file"
    if PurePosixPath(name).suffix.lower() not in EXTENSION_KINDS:
        return "not a supported kind of file"
    return None


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


def _content_type(name: str) -> str:
    return KIND_CONTENT_TYPES[EXTENSION_KINDS[PurePosixPath(name).suffix.lower()]]


def _outcome_entry(action: Action, found: Found, name: str, outcome: Outcome) -> Entry:
    if outcome.status == "error":
        return Entry("failed", found.key, name, f"{outcome.error_code}: {outcome.error_message}")
    return Entry(action, found.key, name)


async def sync_folders(
    runtime: Runtime, principal: Principal, project_id: UUID, roots: Sequence[Path]
) -> Report:
    """Mirror the supported files under ``roots`` into the caller's project."""
    scopes.require_write(principal)
    async with connection(runtime.pool) as conn:
        await projects.get_project(conn, principal.user_id, project_id)
        rows = await fetch_all(conn, "list_synced_documents", project_id=project_id)
    synced = {
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
    found = await anyio.to_thread.run_sync(scan, list(roots))
    report = Report()
    for skipped in found.ignored:
        report.add(Entry("ignored", skipped.key, reason=skipped.reason))

    on_disk = {item.key for item in found.files}
    gone = {key: doc for key, doc in synced.items() if key not in on_disk}
    gone_by_hash = {doc.sha256: doc for doc in gone.values() if doc.sha256}
    for item in found.files:
        try:
            entry = await _sync_one(runtime, project_id, item, synced.get(item.key), gone_by_hash)
        except (ShortlistError, OSError) as exc:
            reason = exc.message if isinstance(exc, ShortlistError) else str(exc)
            entry = Entry("failed", item.key, reason=reason)
        if entry.moved_from is not None:
            gone.pop(entry.moved_from, None)
        report.add(entry)
    for key, doc in gone.items():
        async with connection(runtime.pool) as conn:
            await documents.delete_document(runtime, conn, principal, doc.id)
        report.add(Entry("removed", key, doc.name))
    report.entries.sort(key=lambda entry: (ACTIONS.index(entry.action), entry.path))
    return report


async def _sync_one(
    runtime: Runtime,
    project_id: UUID,
    item: Found,
    known: Synced | None,
    gone_by_hash: dict[str, Synced],
) -> Entry:
    if known is not None and (known.size, known.mtime_ns) == (item.size, item.mtime_ns):
        return _as_it_stands(known, item)
    # The size rule (and name and kind) before reading: a huge file is refused unread.
    uploads.check_file(runtime, item.path.name, _content_type(item.path.name), item.size)
    data = await anyio.to_thread.run_sync(item.path.read_bytes)
    sha = hashlib.sha256(data).hexdigest()
    if known is not None and known.sha256 == sha:
        await _remember(known.id, item, sha, runtime)
        return _as_it_stands(known, item)
    if known is not None:
        return await _replace(runtime, project_id, known, item, data, sha)
    moved = gone_by_hash.pop(sha, None)
    if moved is not None:
        name = item.path.name
        async with connection(runtime.pool) as conn:
            if name.strip().casefold() != moved.name.strip().casefold():
                await uploads.ensure_name_is_free(conn, project_id, name)
            await execute(
                conn,
                "move_synced_document",
                document_id=moved.id,
                sync_path=item.key,
                name=name,
                sync_size=item.size,
                sync_mtime_ns=item.mtime_ns,
            )
        return Entry("updated", item.key, name, moved_from=moved.path)
    document = await store_new_document(
        runtime, project_id, data, item.path.name, _content_type(item.path.name)
    )
    await _remember(document.id, item, sha, runtime)
    outcome = await extract_and_save(
        runtime, document.id, data, document.name, document.content_type
    )
    return _outcome_entry("added", item, document.name, outcome)


def _as_it_stands(known: Synced, item: Found) -> Entry:
    """An unchanged file: unchanged, or still failed if its extraction failed."""
    if known.status == "error":
        return Entry("failed", item.key, known.name, f"{known.error_code}: {known.error_message}")
    return Entry("unchanged", item.key, known.name)


async def _remember(document_id: UUID, item: Found, sha: str, runtime: Runtime) -> None:
    async with connection(runtime.pool) as conn:
        await execute(
            conn,
            "mark_document_synced",
            document_id=document_id,
            sync_path=item.key,
            original_sha256=sha,
            sync_size=item.size,
            sync_mtime_ns=item.mtime_ns,
        )


async def _replace(
    runtime: Runtime, project_id: UUID, known: Synced, item: Found, data: bytes, sha: str
) -> Entry:
    """Store the changed file as the document's new original and extract it again."""
    _, content_type = uploads.check_file(runtime, known.name, _content_type(known.name), len(data))
    key = uploads.object_key(project_id, uuid.uuid4())
    await anyio.to_thread.run_sync(lambda: runtime.blobs.write(key, data, content_type))
    async with connection(runtime.pool) as conn:
        old = await fetch_one(conn, "fetch_document_object_key", document_id=known.id)
        await execute(
            conn,
            "replace_synced_original",
            document_id=known.id,
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
    outcome = await extract_and_save(runtime, known.id, data, known.name, content_type)
    return _outcome_entry("updated", item, known.name, outcome)


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


def roots_of(paths: Iterable[Path]) -> list[Path]:
    """The folders given, each once."""
    return list(dict.fromkeys(path.resolve() for path in paths))
