"""The document-name rule every door applies: a name may carry the folders it came from."""

from __future__ import annotations

import pytest

from service.services.filenames import InvalidFilename, clean_filename, file_part


@pytest.mark.parametrize(
    "name",
    ["notes.md", "a/notes.md", "papers/2019/notes.md", "会議/議事録.md", " a/notes.md "],
)
def test_a_relative_path_is_a_name(name: str) -> None:
    assert clean_filename(name) == name.strip()


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("/etc/passwd.md", "relative"),
        ("C:/notes.md", "relative"),
        ("../notes.md", ".."),
        ("a/../notes.md", ".."),
        ("a//notes.md", "empty"),
        ("a/./notes.md", "empty"),
        ("a/ /notes.md", "empty"),
        ("a/", "empty"),
        ("a\\notes.md", "\\"),
        ("a\nb/notes.md", "control"),
        ("f" * 256 + "/notes.md", "255"),
        ("/".join(["f" * 200] * 5) + "/n.md", "1000"),
    ],
)
def test_an_absolute_escaping_or_malformed_path_is_refused_saying_why(name: str, says: str) -> None:
    with pytest.raises(InvalidFilename) as refused:
        clean_filename(name)

    assert says in refused.value.message


def test_a_download_is_named_by_the_files_own_name() -> None:
    assert file_part("papers/2019/notes.md") == "notes.md"
    assert file_part("notes.md") == "notes.md"
