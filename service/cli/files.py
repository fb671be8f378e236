"""Which files a command that takes FILE… sends: files as named, folders searched for the
kinds Shortlist reads."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from extract.detect import EXTENSION_KINDS


def is_skipped(path: Path) -> bool:
    """Hidden files and folders, and Office lock files (``~$report.docx``)."""
    return path.name.startswith((".", "~$"))


def expand_paths(paths: Iterable[Path]) -> list[Path]:
    """Each file as given; for a folder, the supported files under it, sorted, recursively."""
    files: list[Path] = []
    for path in paths:
        if not path.is_dir():
            files.append(path)
            continue
        for found in sorted(path.rglob("*")):
            relative = found.relative_to(path)
            if any(is_skipped(Path(part)) for part in relative.parts):
                continue
            if found.is_file() and found.suffix.lower() in EXTENSION_KINDS:
                files.append(found)
    return list(dict.fromkeys(files))
