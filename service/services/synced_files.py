"""What may be said of the file a synced document mirrors: one rule for every door.

``shortlist sync`` tells the service, for each file, its path under the synced folder, its
size and its modification time (``POST /api/documents`` and ``POST
/api/documents/{id}/original`` with ``sync``, ``PUT /api/documents/{id}/sync``, or the local
target of :mod:`service.services.folder_sync`). Those values come from a client, so they are
hostile like any other:

- the path is relative, ``/``-separated and in normal form (NFC; no empty, ``.`` or ``..``
  part, no ``\\``, no leading ``/`` or drive: the shape rule of document names,
  :func:`service.services.filenames.path_problem`), without control characters or
  bidirectional overrides, and at most :data:`MAX_SYNC_PATH_LENGTH` characters;
- the size and the modification time (ns) are whole numbers from 0 to
  :data:`MAX_FILE_NUMBER` (what the database's ``bigint`` holds).

The REST bodies apply it when they are decoded (so a bad value is ``400 invalid_request``
naming the field), the sync plan before it tells any target about a file (so the local and the
remote sync refuse the same files, each with its reason).
"""

from __future__ import annotations

import dataclasses
import unicodedata

from service.errors import InvalidRequest
from service.records import SyncedFile
from service.services.filenames import path_problem, unsafe_characters

MAX_SYNC_PATH_LENGTH = 4096
"""Characters of a synced file's path (the ``documents.sync_path`` column's limit)."""
MAX_FILE_NUMBER = 2**63 - 1
"""The largest size or modification time (ns) a sync may report (PostgreSQL's ``bigint``)."""


def sync_path_problem(path: str) -> str | None:
    """What is wrong with ``path`` as a synced file's path (a sentence naming the field), or
    None. A path that is only not in NFC is not wrong: :func:`normal_sync_path` fixes it."""
    normal = normal_sync_path(path)
    if not normal:
        return "path is empty"
    if len(normal) > MAX_SYNC_PATH_LENGTH:
        return f"path is longer than {MAX_SYNC_PATH_LENGTH} characters"
    if problem := unsafe_characters(normal):
        return f"path contains {problem}"
    if problem := path_problem(normal):
        return f"path {problem}"
    return None


def normal_sync_path(path: str) -> str:
    """``path`` as it is stored and compared: NFC, so a file named in decomposed form (macOS)
    is the same file on every sync."""
    return unicodedata.normalize("NFC", path)


def number_problem(field: str, value: int | None) -> str | None:
    """What is wrong with ``value`` as a synced file's ``size`` or ``mtime_ns``, or None."""
    if value is not None and not 0 <= value <= MAX_FILE_NUMBER:
        return f"{field} must be a whole number from 0 to {MAX_FILE_NUMBER}"
    return None


def check_synced_file(path: str, size: int | None, mtime_ns: int | None) -> str:
    """The normal path, or InvalidRequest naming the field that breaks the rule."""
    for field, problem in (
        ("path", sync_path_problem(path)),
        ("size", number_problem("size", size)),
        ("mtime_ns", number_problem("mtime_ns", mtime_ns)),
    ):
        if problem is not None:
            raise InvalidRequest(f"The synced file's {problem}.", field=field)
    return normal_sync_path(path)


def checked(sync: SyncedFile | None) -> SyncedFile | None:
    """``sync`` with its path in normal form, or InvalidRequest naming what breaks the rule."""
    if sync is None:
        return None
    path = check_synced_file(sync.path, sync.size, sync.mtime_ns)
    return dataclasses.replace(sync, path=path)
