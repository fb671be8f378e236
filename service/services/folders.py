"""Which files under a folder Shortlist reads, and what each is called: the one walker that
``shortlist upload``, ``shortlist ingest`` and ``shortlist sync`` share.

:func:`scan` walks folders (*roots*). Dot-files and dot-folders, Office lock files
(``~$…``), what a root's ``.shortlistignore`` excludes (gitignore syntax, read with
``pathspec``), symbolic links (never followed out of a root) and files of kinds Shortlist
does not read are left out, each with its reason. Every file found has a *key*: its path
under the root, ``/``-separated, in NFC (``a/notes.md``). The key is the document's name (the rule
of :mod:`service.services.filenames`) and, for a synced file, the path its document
remembers. With several roots each key starts with its root's label (:func:`root_labels`:
the folder's name, or as many of its last folders as tell it from the others), so two
roots never collide.

:func:`expand_paths` is what a command that takes ``FILE_OR_FOLDER…`` sends: a file as given
(named by its own name), and for the folders among them what :func:`scan` finds.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

import pathspec

from extract.detect import EXTENSION_KINDS
from service.services.synced_files import normal_sync_path

IGNORE_FILE = ".shortlistignore"
"""A root's file of gitignore-style patterns of what not to read."""
LOCK_FILE_PREFIX = "~$"
"""Office's lock files (``~$report.docx``) while a document is open."""


class Found(NamedTuple):
    """A file to read: where it is, and its key (its name; path under the folder)."""

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


class NamedFile(NamedTuple):
    """A file a command sends, and the name its document gets."""

    path: Path
    name: str


def roots_of(paths: Iterable[Path]) -> list[Path]:
    """The folders given, resolved, each once."""
    return list(dict.fromkeys(path.resolve() for path in paths))


def root_labels(roots: Sequence[Path]) -> list[str]:
    """What the keys of each of several (resolved) roots start with: the folder's name, or as
    many of its last folders as it takes to tell it from the others (``x/papers`` and
    ``y/papers``). One root has no label: its keys are paths under it."""
    if len(roots) < 2:
        return [""] * len(roots)
    parts = [root.parts[1:] or (root.anchor,) for root in roots]
    depth = [1] * len(roots)
    while True:
        labels = ["/".join(names[-d:]) for names, d in zip(parts, depth, strict=True)]
        clashing = {label for label in labels if labels.count(label) > 1}
        grown = False
        for index, label in enumerate(labels):
            if label in clashing and depth[index] < len(parts[index]):
                depth[index] += 1
                grown = True
        if not grown:
            return labels


def scan(roots: Sequence[Path]) -> Scan:
    """The files under ``roots`` to read, and the ones left out with why."""
    found = Scan()
    resolved = roots_of(roots)
    for root, label in zip(resolved, root_labels(resolved), strict=True):
        _walk(root, _prefix(label), found)
    return found


def _walk(root: Path, prefix: str, found: Scan) -> None:
    spec = _ignore_spec(root)
    for folder, dirs, files in os.walk(root):
        base = Path(folder)
        relative_dir = base.relative_to(root).as_posix()
        kept_dirs = []
        for name in sorted(dirs):
            rel = name if relative_dir == "." else f"{relative_dir}/{name}"
            if name.startswith(".") or spec.match_file(rel + "/"):
                found.ignored.append(Skipped(prefix + rel + "/", "ignored folder"))
            elif (base / name).is_symlink():
                found.ignored.append(Skipped(prefix + rel + "/", "symbolic link"))
            else:
                kept_dirs.append(name)
        dirs[:] = kept_dirs
        for name in sorted(files):
            rel = name if relative_dir == "." else f"{relative_dir}/{name}"
            reason = _skip_reason(base / name, name, rel, spec)
            if reason is not None:
                if name != IGNORE_FILE:
                    found.ignored.append(Skipped(prefix + rel, reason))
                continue
            stat = (base / name).stat()
            key = normal_sync_path(prefix + rel)
            found.files.append(Found(base / name, key, stat.st_size, stat.st_mtime_ns))


def _ignore_spec(root: Path) -> pathspec.GitIgnoreSpec:
    ignore = root / IGNORE_FILE
    lines = ignore.read_text(encoding="utf-8").splitlines() if ignore.is_file() else []
    return pathspec.GitIgnoreSpec.from_lines(lines)


def _skip_reason(path: Path, name: str, rel: str, spec: pathspec.GitIgnoreSpec) -> str | None:
    if name.startswith("."):
        return "dot-file"
    if name.startswith(LOCK_FILE_PREFIX):
        return "Office lock file"
    if spec.match_file(rel):
        return f"excluded by {IGNORE_FILE}"
    if path.is_symlink():
        return "symbolic link"
    if not path.is_file():
        return "not a regular file"
    if PurePosixPath(name).suffix.lower() not in EXTENSION_KINDS:
        return "not a supported kind of file"
    return None


def expand_paths(paths: Iterable[Path]) -> list[NamedFile]:
    """Each file as given, named by its own name; for the folders among ``paths``, the files
    :func:`scan` finds under them, named by their keys. A file given twice is sent once."""
    given = list(paths)
    folders = roots_of(path for path in given if path.is_dir())
    labels = dict(zip(folders, root_labels(folders), strict=True))
    named: dict[Path, NamedFile] = {}
    for path in given:
        if not path.is_dir():
            named.setdefault(path.resolve(), NamedFile(path, path.name))
            continue
        root = path.resolve()
        under = Scan()
        _walk(root, _prefix(labels[root]), under)
        for item in under.files:
            named.setdefault(item.path, NamedFile(item.path, item.key))
    return list(named.values())


def _prefix(label: str) -> str:
    return f"{label}/" if label else ""
