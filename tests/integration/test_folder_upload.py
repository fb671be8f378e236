"""Folders given to `shortlist upload` and `shortlist ingest`: the walker `sync` uses (names by
path under the folder, `.shortlistignore`, no symbolic links), and one file's failure never
harms another — on the local runtime and against a running service."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import httpx
import psycopg
import pytest
from psycopg.rows import dict_row

from service.cli.client import ShortlistClient
from service.cli.upload import send_files
from service.runtime import open_runtime
from service.services import users
from service.services.folders import IGNORE_FILE, NamedFile, expand_paths
from service.services.ingest import ingest_files
from service.settings import Settings
from service.storage.db import connection
from tests.browser.live_service import run_service
from tests.support.cli import cli_environment, run_cli

pytestmark = pytest.mark.anyio

SENT = ["notes.md", "a/notes.md", "b/notes.md"]
"""What :func:`folder` holds to send, by name, in the order sent (a folder's files first)."""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def folder(tmp_path: Path) -> Path:
    """Three files named notes.md, and what a walk leaves out: an ignored folder and pattern,
    a symbolic link to a file and one to a folder outside."""
    root = tmp_path / "meetings"
    write(root / "notes.md", "# Notes\n\nThe board met on Monday.\n")
    write(root / "a" / "notes.md", "# Notes\n\nTeam A counted herons.\n")
    write(root / "b" / "notes.md", "# Notes\n\nTeam B counted egrets.\n")
    write(root / "drafts" / "agenda.md", "# Draft\n\nNot for sharing.\n")
    write(root / "minutes.draft.md", "# Draft\n\nNot for sharing either.\n")
    write(root / IGNORE_FILE, "drafts/\n*.draft.md\n")
    (root / "latest.md").symlink_to(root / "a" / "notes.md")
    outside = write(tmp_path / "private" / "diary.md", "# Diary\n\nPrivate.\n")
    (root / "private").symlink_to(outside.parent, target_is_directory=True)
    return root


async def test_ingest_names_a_folders_files_by_path_and_one_unreadable_file_harms_no_other(
    settings: Settings, tmp_path: Path
) -> None:
    files = expand_paths([folder(tmp_path)])
    vanished = NamedFile(tmp_path / "gone.md", "gone.md")  # listed, then deleted before read
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            owner = await users.create_user(conn, "owner")
            principal = await users.authenticate(conn, owner.token)
        results = await ingest_files(runtime, principal, owner.project, [vanished, *files])

    assert [file.name for file in files] == SENT
    failed, *stored = results
    assert failed.error is not None and failed.error.code == "file_unreadable"
    assert failed.name == "gone.md" and "gone.md" in failed.error.message
    assert [(r.document.name if r.document else None, r.error) for r in stored] == [
        (name, None) for name in SENT
    ]
    assert all(r.outcome is not None and r.outcome.status == "ready" for r in stored)


def test_a_folder_upload_names_files_by_path_keeps_roots_apart_and_survives_a_lost_file(
    db_url: str, tmp_path: Path
) -> None:
    root = folder(tmp_path)
    other = tmp_path / "elsewhere" / "meetings"  # a second root of the same name
    write(other / "notes.md", "# Notes\n\nThe other board met on Friday.\n")
    created = _user(db_url, "erin")
    env = {**cli_environment(db_url, tmp_path / "data"), "SHORTLIST_TOKEN": created.token}

    with run_service(db_url, tmp_path / "service") as base_url:
        uploaded = run_cli(env, "upload", str(root), "--url", base_url, "--json")
        both = run_cli(
            env, "upload", str(root), str(other), "--url", base_url, "--json", "--no-wait"
        )
        board = io.StringIO()
        lost = send_files(
            base_url,
            created.token,
            str(created.project.id),
            [NamedFile(tmp_path / "gone.md", "gone.md"), NamedFile(other / "notes.md", "fri.md")],
            wait=True,
            concurrency=2,
            stream=board,
        )
        with ShortlistClient(base_url, created.token) as client:
            listed = client.list_documents(str(created.project.id))
        (in_a,) = [document for document in listed if document["name"] == "a/notes.md"]
        auth = {"Authorization": f"Bearer {created.token}"}
        link = httpx.get(f"{base_url}/api/documents/{in_a['id']}/file", headers=auth).json()
        download = httpx.get(link["url"])

    assert uploaded.returncode == 0, uploaded.stdout + uploaded.stderr
    entries = json.loads(uploaded.stdout)
    assert [(e["document"]["name"], e["status"]) for e in entries] == [
        (name, "ready") for name in SENT
    ]
    assert both.returncode == 0, both.stdout + both.stderr
    assert [e["document"]["name"] for e in json.loads(both.stdout)] == [
        *(f"{tmp_path.name}/meetings/{name}" for name in SENT),  # "meetings" twice: one
        "elsewhere/meetings/notes.md",  # folder more tells them apart
    ]
    gone, kept = lost
    assert gone["status"] == "error" and gone["error"]["code"] == "file_unreadable"
    assert (kept["document"]["name"], kept["status"]) == ("fri.md", "ready")
    assert "gone.md: error — Cannot read" in board.getvalue()
    assert download.status_code == 200 and download.text.startswith("# Notes")
    assert 'filename="notes.md"' in download.headers["content-disposition"]  # not a path
    names = sorted(document["name"] for document in listed)
    assert "latest.md" not in names and not any("diary" in name for name in names)
    assert not any("draft" in name or "agenda" in name for name in names)


def _user(db_url: str, name: str) -> users.NewUser:
    async def create() -> users.NewUser:
        async with await psycopg.AsyncConnection.connect(
            db_url, autocommit=True, row_factory=dict_row
        ) as conn:
            return await users.create_user(conn, name)

    return anyio.run(create)
