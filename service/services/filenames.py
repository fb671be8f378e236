"""What a document (and, for its characters, a project) may be called.

Names are shown to people and models, so they are kept as given (any script,
right-to-left included) after NFC normalisation and trimming, but a name may
not hold control characters or bidirectional overrides (which can make
``report‮fdp.exe`` read as ``report.exe.pdf``).

A document's name may carry the folders it came from: a file uploaded or synced from a
folder is named by its path under that folder (``a/notes.md``, ``papers/2019/notes.md``),
so two ``notes.md`` of different folders are two documents. The rule, for every door that
takes a document name (upload grants, ``shortlist ingest``, ``shortlist sync``, URL
imports, MCP ``add_document``, a synced file's move): parts are separated by ``/`` only
(never ``\\``), the path is relative (no leading ``/``, no drive) and no part is empty,
``.`` or ``..``. The walker that finds those files (:mod:`service.services.folders`) names
each by its path under the folder it was given; :func:`file_part` is the file's own name,
for what takes only that (a download's file name).
"""

from __future__ import annotations

import unicodedata
from pathlib import PureWindowsPath

from service.errors import InvalidRequest

MAX_NAME_LENGTH = 1000
"""Characters of a whole name, folders included (what the ``documents.name`` column holds)."""
MAX_PART_LENGTH = 255
"""Characters of one folder or file name in it (what file systems allow)."""
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class InvalidFilename(InvalidRequest):
    """That file name cannot be used."""

    code = "invalid_filename"


def clean_filename(name: str) -> str:
    """The name as it will be stored, or InvalidFilename saying what is wrong."""
    cleaned = unicodedata.normalize("NFC", name).strip()
    if not cleaned:
        raise InvalidFilename("The file name is empty.")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise InvalidFilename(
            f"The file name is longer than {MAX_NAME_LENGTH} characters; shorten it."
        )
    if problem := unsafe_characters(cleaned):
        raise InvalidFilename(f"The file name contains {problem}.")
    if problem := path_problem(cleaned):
        raise InvalidFilename(f"The file name {problem}.")
    return cleaned


def path_problem(path: str) -> str | None:
    """What keeps ``path`` from being a relative, ``/``-separated path, or None: the shape rule
    of a document name and of a synced file's path (:mod:`service.services.synced_files`).
    Worded to follow "The file name" (or another subject)."""
    if "\\" in path:
        return "may not contain \\; separate the folders of a path with /"
    parts = path.split("/")
    if path.startswith("/") or (len(parts) > 1 and PureWindowsPath(path).drive):
        return "must be relative: a path under its folder, without a leading / or a drive"
    if any(part.strip() in ("", ".", "..") for part in parts):
        return "may have no part that is empty, . or .. (folders are separated by one /)"
    if any(len(part) > MAX_PART_LENGTH for part in parts):
        return f"has a folder or file name longer than {MAX_PART_LENGTH} characters; shorten it"
    return None


def file_part(name: str) -> str:
    """The file's own name in a document name (``notes.md`` of ``a/notes.md``)."""
    return name.rsplit("/", 1)[-1]


def unsafe_characters(name: str) -> str | None:
    """What in ``name`` may not be in any name (file or project), or None.

    Control characters (NUL, newlines…) and bidirectional overrides and isolates,
    which make a name read otherwise than it is.
    """
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        return "control characters"
    if any(ch in _BIDI_CONTROLS for ch in name):
        return "bidirectional override characters"
    return None
