"""The one folder walker: what upload, ingest and sync read under a folder, and the names."""

from __future__ import annotations

from pathlib import Path

from service.services.folders import IGNORE_FILE, NamedFile, expand_paths, root_labels, scan


def write(path: Path, text: str = "# Notes\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def folder(tmp_path: Path) -> Path:
    """A folder with a repeated name, an ignore file, links, dot-files and a lock file."""
    root = tmp_path / "notes"
    write(root / "a" / "notes.md")
    write(root / "b" / "notes.md")
    write(root / "drafts" / "wip.md")
    write(root / "keep.draft.md")
    write(root / ".hidden.md")
    write(root / "~$notes.docx")
    write(root / "tool.exe")
    write(root / IGNORE_FILE, "drafts/\n*.draft.md\n")
    (root / "link.md").symlink_to(root / "a" / "notes.md")
    outside = write(tmp_path / "outside" / "secret.md")
    (root / "elsewhere").symlink_to(outside.parent, target_is_directory=True)
    return root


def test_a_scan_names_each_file_by_its_path_and_says_why_the_rest_is_left_out(
    tmp_path: Path,
) -> None:
    found = scan([folder(tmp_path)])

    assert [item.key for item in found.files] == ["a/notes.md", "b/notes.md"]
    assert dict(found.ignored) == {
        ".hidden.md": "dot-file",
        "~$notes.docx": "Office lock file",
        "keep.draft.md": f"excluded by {IGNORE_FILE}",
        "drafts/": "ignored folder",
        "link.md": "symbolic link",
        "elsewhere/": "symbolic link",
        "tool.exe": "not a supported kind of file",
    }


def test_upload_and_ingest_send_what_a_scan_finds_and_files_as_given(tmp_path: Path) -> None:
    root = folder(tmp_path)
    loose = write(tmp_path / "loose.md")
    unsupported = write(tmp_path / "given.exe")

    sent = expand_paths([loose, root, root / "a" / "notes.md", unsupported])

    assert sent == [
        NamedFile(loose, "loose.md"),
        NamedFile((root / "a" / "notes.md").resolve(), "a/notes.md"),  # given twice: once
        NamedFile((root / "b" / "notes.md").resolve(), "b/notes.md"),
        NamedFile(unsupported, "given.exe"),  # named by the user: the service decides
    ]


def test_several_roots_are_kept_apart_by_the_fewest_folders_that_tell_them_apart(
    tmp_path: Path,
) -> None:
    roots = [tmp_path / "x" / "papers", tmp_path / "y" / "papers", tmp_path / "work"]
    for root in roots:
        write(root / "notes.md")

    keys = [item.key for item in scan(roots).files]

    assert root_labels(roots) == ["x/papers", "y/papers", "work"]
    assert keys == ["x/papers/notes.md", "y/papers/notes.md", "work/notes.md"]
    nested = [tmp_path / "a" / "p", tmp_path / "b" / "a" / "p"]  # "a/p" twice: both go deeper
    assert root_labels(nested) == [f"{tmp_path.name}/a/p", "b/a/p"]
    assert root_labels([tmp_path / "only"]) == [""]
