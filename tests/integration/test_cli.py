from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest


def shortlist(db_url: str, data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DATABASE_URL": db_url, "SHORTLIST_DATA_DIR": str(data_dir)}
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_user_create_prints_one_json_document_with_token_and_project(
    db_url: str, tmp_path: Path
) -> None:
    result = shortlist(db_url, tmp_path, "user", "create", "alice", "--json")

    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert set(document) == {"user", "token", "project"}
    assert document["user"]["name"] == "alice"
    assert document["token"].startswith("sl_")
    assert document["project"]["name"] == "default"


def test_a_refused_command_exits_2_with_a_json_error(db_url: str, tmp_path: Path) -> None:
    assert shortlist(db_url, tmp_path, "user", "create", "alice").returncode == 0

    result = shortlist(db_url, tmp_path, "user", "create", "ALICE", "--json")

    assert result.returncode == 2
    assert json.loads(result.stdout) == {
        "error": {"code": "user_exists", "message": "A user named 'ALICE' already exists."}
    }


def test_an_unreachable_database_exits_1(tmp_path: Path) -> None:
    result = shortlist(
        "postgresql://nobody@127.0.0.1:1/none?connect_timeout=1", tmp_path, "user", "list", "--json"
    )

    assert result.returncode == 1
    assert "error" in json.loads(result.stdout)


def test_projects_and_tokens_round_trip_through_the_cli(db_url: str, tmp_path: Path) -> None:
    created = json.loads(shortlist(db_url, tmp_path, "user", "create", "alice", "--json").stdout)

    made = shortlist(db_url, tmp_path, "project", "create", "papers", "--user", "alice", "--json")
    listed = json.loads(
        shortlist(db_url, tmp_path, "project", "list", "--user", "alice", "--json").stdout
    )
    revoked = shortlist(db_url, tmp_path, "token", "revoke", created["token"], "--json")
    again = shortlist(db_url, tmp_path, "token", "revoke", created["token"], "--json")

    assert made.returncode == 0
    assert sorted(p["name"] for p in listed["projects"]) == ["default", "papers"]
    assert revoked.returncode == 0
    assert len(json.loads(revoked.stdout)["revoked"]) == 1
    assert again.returncode == 2
    assert json.loads(again.stdout)["error"]["code"] == "token_not_found"


def test_config_masks_secrets(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DATABASE_URL": "postgresql://u:pw@db/x",
        "COHERE_API_KEY": "k-123",
        "SHORTLIST_DATA_DIR": str(tmp_path),
    }
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", "config", "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )

    document = json.loads(result.stdout)
    assert "pw" not in result.stdout and "k-123" not in result.stdout
    assert document["database_url"] == "********"
    assert document["resolved"]["reranker"] == "cohere"


@pytest.mark.parametrize("args", [["--help"], ["serve", "--help"], ["user", "create", "--help"]])
def test_help_works_without_a_database(args: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0
    assert "Usage" in result.stdout
