"""How the CLI names itself in hints: as the user can type it again."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from service.cli.serve import invoked_as


def test_a_command_not_on_the_path_is_named_by_the_path_it_was_started_by(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    program = tmp_path / ".venv" / "bin" / "shortlist"
    monkeypatch.setattr(sys, "argv", [".venv/bin/shortlist", "serve"])
    monkeypatch.chdir(tmp_path)
    program.parent.mkdir(parents=True)
    program.write_text("")
    monkeypatch.setenv("PATH", str(tmp_path / "elsewhere"))
    assert invoked_as() == ".venv/bin/shortlist"


def test_the_command_on_the_path_is_just_shortlist(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    program = bin_dir / "shortlist"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    monkeypatch.setattr(sys, "argv", [str(program), "serve"])
    assert shutil.which("shortlist") == str(program)
    assert invoked_as() == "shortlist"


def test_python_dash_m_is_named_shortlist(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["/repo/service/cli/__main__.py", "serve"])
    assert invoked_as() == "shortlist"
