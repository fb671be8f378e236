"""`shortlist sync`: a project mirrors a temporary folder through add, unchanged, update,
move, delete and ignore — against the real database, blob store and extractor."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from service.records import Principal
from service.runtime import open_runtime
from service.services import documents, folder_sync, users
from service.services.ingest import ingest_file
from service.settings import Settings
from service.storage.db import connection, fetch_one
from tests.support.paths import REPO_DIR

pytestmark = pytest.mark.anyio


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def markdown_of(runtime: Any, principal: Principal, document_id: Any) -> str:
    async with connection(runtime.pool) as conn:
        return (await documents.read_text(conn, principal, document_id)).markdown


async def test_a_project_mirrors_a_folder_through_add_unchanged_update_move_delete_and_ignore(
    settings: Settings, tmp_path: Path
) -> None:
    root = tmp_path / "papers"
    write(root / "alpha.md", "# Alpha\n\nThe alpha survey counted herons.\n")
    write(root / "sub" / "beta.txt", "Beta notes on the estuary tides.\n")
    write(root / ".hidden.md", "secret\n")
    write(root / "~$alpha.docx", "lock")
    write(root / "notes.log", "not a document kind")
    write(root / "build" / "generated.md", "# Generated\n")
    write(root / "gamma.draft.md", "# Draft\n")
    write(root / folder_sync.IGNORE_FILE, "build/\n*.draft.md\n")
    elsewhere = write(tmp_path / "uploaded.md", "# Uploaded\n\nKept apart from the folder.\n")

    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            owner = await users.create_user(conn, "owner")
            principal = await users.authenticate(conn, owner.token)
        uploaded = await ingest_file(runtime, owner.project, elsewhere)
        assert uploaded.document is not None

        async def sync() -> dict[str, Any]:
            report = await folder_sync.sync_folders(runtime, principal, owner.project.id, [root])
            return folder_sync.report_json(report)

        async def synced() -> dict[str, Any]:
            async with connection(runtime.pool) as conn:
                listed = await documents.list_documents(conn, principal, owner.project.id)
            return {document.name: document for document in listed}

        first = await sync()
        assert {k: first[k] for k in folder_sync.ACTIONS} == {
            "added": 2,
            "updated": 0,
            "unchanged": 0,
            "removed": 0,
            "ignored": 5,
            "failed": 0,
        }, first
        assert sorted(e["path"] for e in first["details"]["added"]) == ["alpha.md", "sub/beta.txt"]
        ignored = {e["path"]: e["reason"] for e in first["details"]["ignored"]}
        assert ignored == {
            ".hidden.md": "dot-file",
            "~$alpha.docx": "Office lock file",
            "notes.log": "not a supported kind of file",
            "build/": "ignored folder",
            "gamma.draft.md": "excluded by .shortlistignore",
        }
        docs = await synced()
        assert set(docs) == {"alpha.md", "beta.txt", "uploaded.md"}
        assert all(d.status == "ready" for d in docs.values())
        alpha_id, beta_id = docs["alpha.md"].id, docs["beta.txt"].id
        assert "herons" in await markdown_of(runtime, principal, alpha_id)

        # Same size and mtime: skipped without reading — bytes swapped behind its back stay unseen.
        alpha = root / "alpha.md"
        stat = alpha.stat()
        alpha.write_text("# Alpha\n\nThe alpha survey counted egrets.\n", encoding="utf-8")
        assert alpha.stat().st_size == stat.st_size
        os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        second = await sync()
        assert (second["added"], second["updated"], second["unchanged"]) == (0, 0, 2), second
        assert "herons" in await markdown_of(runtime, principal, alpha_id)

        # Changed bytes: re-extracted in place (same document id).
        write(alpha, "# Alpha\n\nThe alpha survey now counts cormorants as well.\n")
        # Touched but the same bytes: unchanged.
        beta = root / "sub" / "beta.txt"
        os.utime(beta, ns=(beta.stat().st_atime_ns, beta.stat().st_mtime_ns + 10**9))
        third = await sync()
        assert (third["updated"], third["unchanged"]) == (1, 1), third
        assert third["details"]["updated"] == [{"path": "alpha.md", "name": "alpha.md"}]
        docs = await synced()
        assert docs["alpha.md"].id == alpha_id
        assert "cormorants" in await markdown_of(runtime, principal, alpha_id)
        beta_extracted_at = docs["beta.txt"].extracted_at

        # Moved and renamed with the same bytes: the document follows, extraction kept.
        moved = root / "archive" / "beta-2019.txt"
        moved.parent.mkdir()
        beta.rename(moved)
        fourth = await sync()
        assert fourth["details"]["updated"] == [
            {"path": "archive/beta-2019.txt", "name": "beta-2019.txt", "moved_from": "sub/beta.txt"}
        ], fourth
        assert fourth["removed"] == 0 and fourth["added"] == 0
        docs = await synced()
        assert docs["beta-2019.txt"].id == beta_id
        assert docs["beta-2019.txt"].extracted_at == beta_extracted_at

        # Deleted: the document and its original go; the uploaded document stays.
        object_key = docs["alpha.md"].object_key
        assert object_key is not None and runtime.blobs.head(object_key) is not None
        alpha.unlink()
        fifth = await sync()
        assert fifth["details"]["removed"] == [{"path": "alpha.md", "name": "alpha.md"}]
        assert set(await synced()) == {"beta-2019.txt", "uploaded.md"}
        assert runtime.blobs.head(object_key) is None

        # A file that cannot be extracted fails with its reason, now and on the next sync.
        write(root / "empty.md", "   \n")
        for _ in range(2):
            failing = await sync()
            assert failing["failed"] == 1, failing
            (entry,) = failing["details"]["failed"]
            assert entry["path"] == "empty.md" and entry["reason"].startswith("empty_document")
        async with connection(runtime.pool) as conn:
            row = await fetch_one(conn, "list_synced_documents", project_id=owner.project.id)
        assert row is not None and row["original_sha256"] is not None


def test_sync_json_reports_counts_and_exits_2_when_a_file_failed(
    db_url: str, tmp_path: Path
) -> None:
    root = tmp_path / "folder"
    write(root / "good.md", "# Good\n\nA lighthouse log.\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really a PDF\n")
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SHORTLIST_DATA_DIR": str(tmp_path / "data"),
        "SHORTLIST_SEARCH__RERANKER": "none",
        "SHORTLIST_EXTRACTION__WARM_PROCESSES": "0",
    }
    env.pop("SHORTLIST_TOKEN", None)

    def shortlist(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "service.cli", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO_DIR,
            timeout=120,
            check=False,
        )

    created = shortlist("user", "create", "carol", "--json")
    assert created.returncode == 0, created.stderr
    synced = shortlist("sync", str(root), "--json")
    assert synced.returncode == 2, synced.stderr
    report = json.loads(synced.stdout)
    assert (report["added"], report["failed"]) == (1, 1), report
    assert report["details"]["added"] == [{"path": "good.md", "name": "good.md"}]
    assert report["details"]["failed"][0]["path"] == "broken.pdf"
    assert report["details"]["failed"][0]["reason"].startswith("corrupt_document")
    again = shortlist("sync", str(root))
    assert again.returncode == 2
    assert "1 unchanged" in again.stdout and "failed   broken.pdf" in again.stderr


async def test_a_file_over_the_upload_limit_fails_with_the_limit_and_is_not_stored(
    settings: Settings, tmp_path: Path
) -> None:
    limited = settings.model_copy(
        update={"storage": settings.storage.model_copy(update={"max_upload_bytes": 100})}
    )
    root = tmp_path / "big"
    write(root / "huge.md", "# Huge\n\n" + "word " * 100)
    write(root / "small.md", "# Small\n\nFits.\n")
    async with open_runtime(limited) as runtime:
        async with connection(runtime.pool) as conn:
            owner = await users.create_user(conn, "owner")
            principal = await users.authenticate(conn, owner.token)
        report = await folder_sync.sync_folders(runtime, principal, owner.project.id, [root])
        async with connection(runtime.pool) as conn:
            listed = await documents.list_documents(conn, principal, owner.project.id)

    shown = folder_sync.report_json(report)
    assert (shown["added"], shown["failed"]) == (1, 1), shown
    (failed,) = shown["details"]["failed"]
    assert failed["path"] == "huge.md" and "the limit is" in failed["reason"]
    assert [document.name for document in listed] == ["small.md"]
