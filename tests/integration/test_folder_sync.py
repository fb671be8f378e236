"""`shortlist sync`: a project mirrors a temporary folder through add, unchanged, update,
move, delete and ignore — against the real database, blob store and extractor, on the local
runtime and on a running service (SHORTLIST_TOKEN's way, over REST), with the same answers."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, Protocol
from uuid import UUID

import anyio.to_thread
import httpx
import psycopg
import pytest
from psycopg.rows import dict_row

from service.cli.client import ShortlistClient
from service.cli.remote_sync import sync_remote
from service.errors import SyncPathTaken
from service.records import Principal
from service.runtime import open_runtime
from service.services import documents, folder_sync, folders, users
from service.services.ingest import ingest_file
from service.settings import Settings
from service.storage.db import connection
from tests.browser.live_service import run_service
from tests.support.cli import cli_environment, run_cli
from tests.support.paths import REPO_DIR

pytestmark = pytest.mark.anyio


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def markdown_of(runtime: Any, principal: Principal, document_id: Any) -> str:
    async with connection(runtime.pool) as conn:
        return (await documents.read_text(conn, principal, document_id)).markdown


class Listed(NamedTuple):
    id: str
    status: str
    extracted_at: Any
    sha256: str | None


class Mirror(Protocol):
    """One way to run ``shortlist sync`` and look at the project it fills."""

    async def sync(self) -> dict[str, Any]: ...
    async def documents(self) -> dict[str, Listed]: ...
    async def markdown(self, document_id: str) -> str: ...
    async def original_gone(self, document_id: str) -> bool: ...


class LocalMirror:
    """The local runtime (the embedded defaults or DATABASE_URL; no service running)."""

    def __init__(self, runtime: Any, principal: Principal, project_id: Any, root: Path) -> None:
        self.runtime, self.principal, self.project_id, self.root = (
            runtime,
            principal,
            project_id,
            root,
        )
        self.keys: dict[str, str] = {}

    async def sync(self) -> dict[str, Any]:
        report = await folder_sync.sync_folders(
            self.runtime, self.principal, self.project_id, [self.root]
        )
        return folder_sync.report_json(report)

    async def documents(self) -> dict[str, Listed]:
        async with connection(self.runtime.pool) as conn:
            listed = await documents.list_documents(conn, self.principal, self.project_id)
        for document in listed:
            assert document.object_key is not None
            self.keys[str(document.id)] = document.object_key
        return {
            d.name: Listed(str(d.id), d.status, d.extracted_at, d.sync.sha256 if d.sync else None)
            for d in listed
        }

    async def markdown(self, document_id: str) -> str:
        async with connection(self.runtime.pool) as conn:
            text = await documents.read_text(conn, self.principal, UUID(document_id))
        return text.markdown

    async def original_gone(self, document_id: str) -> bool:
        return self.runtime.blobs.head(self.keys[document_id]) is None


class RemoteMirror:
    """A running service (uvicorn, its worker), over REST with the user's token."""

    def __init__(self, base_url: str, token: str, project_id: str, root: Path) -> None:
        self.base_url, self.token, self.project_id, self.root = base_url, token, project_id, root
        self.http = httpx.AsyncClient(
            base_url=base_url, headers={"Authorization": f"Bearer {token}"}, timeout=30
        )

    async def sync(self) -> dict[str, Any]:
        report = await anyio.to_thread.run_sync(
            lambda: sync_remote(
                ShortlistClient(self.base_url, self.token), None, [self.root], wait_seconds=60
            )
        )
        return folder_sync.report_json(report)

    async def documents(self) -> dict[str, Listed]:
        answer = await self.http.get(f"/api/projects/{self.project_id}/documents")
        assert answer.status_code == 200, answer.text
        return {
            d["name"]: Listed(
                d["id"], d["status"], d["extracted_at"], (d["sync"] or {}).get("sha256")
            )
            for d in answer.json()["documents"]
        }

    async def markdown(self, document_id: str) -> str:
        answer = await self.http.get(f"/api/documents/{document_id}/text")
        assert answer.status_code == 200, answer.text
        markdown: str = answer.json()["markdown"]
        return markdown

    async def original_gone(self, document_id: str) -> bool:
        return (await self.http.get(f"/api/documents/{document_id}/file")).status_code == 404


def folder_with_everything(tmp_path: Path) -> Path:
    root = tmp_path / "papers"
    write(root / "alpha.md", "# Alpha\n\nThe alpha survey counted herons.\n")
    write(root / "sub" / "beta.txt", "Beta notes on the estuary tides.\n")
    write(root / ".hidden.md", "secret\n")
    write(root / "~$alpha.docx", "lock")
    write(root / "notes.log", "not a document kind")
    write(root / "build" / "generated.md", "# Generated\n")
    write(root / "gamma.draft.md", "# Draft\n")
    write(root / folders.IGNORE_FILE, "build/\n*.draft.md\n")
    return root


async def test_a_project_mirrors_a_folder_through_add_unchanged_update_move_delete_and_ignore(
    settings: Settings, tmp_path: Path
) -> None:
    root = folder_with_everything(tmp_path)
    elsewhere = write(tmp_path / "uploaded.md", "# Uploaded\n\nKept apart from the folder.\n")
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            owner = await users.create_user(conn, "owner")
            principal = await users.authenticate(conn, owner.token)
        uploaded = await ingest_file(runtime, owner.project, elsewhere)
        assert uploaded.document is not None
        await mirror_scenario(LocalMirror(runtime, principal, owner.project.id, root), root)


async def test_a_running_service_mirrors_a_folder_through_the_same_plan_over_rest(
    db_url: str, tmp_path: Path
) -> None:
    """SHORTLIST_TOKEN's way: grants, uploads and the REST routes of a live service."""
    root = folder_with_everything(tmp_path)
    elsewhere = write(tmp_path / "uploaded.md", "# Uploaded\n\nKept apart from the folder.\n")
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        owner = await users.create_user(conn, "owner")
    with run_service(db_url, tmp_path / "service") as base_url:
        project_id = str(owner.project.id)
        with ShortlistClient(base_url, owner.token) as client:
            kept = client.wait(client.upload(project_id, elsewhere)["id"], interval=0.2)
        assert kept["status"] == "ready" and kept["sync"] is None
        mirror = RemoteMirror(base_url, owner.token, project_id, root)
        async with mirror.http:
            await mirror_scenario(mirror, root)


async def mirror_scenario(mirror: Mirror, root: Path) -> None:
    """Add, unchanged, update, move, delete and ignore: the same answers whichever mirror."""
    first = await mirror.sync()
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
    docs = await mirror.documents()
    assert set(docs) == {"alpha.md", "sub/beta.txt", "uploaded.md"}
    assert all(d.status == "ready" for d in docs.values())
    alpha_id, beta_id = docs["alpha.md"].id, docs["sub/beta.txt"].id
    assert docs["alpha.md"].sha256 is not None and docs["uploaded.md"].sha256 is None
    assert "herons" in await mirror.markdown(alpha_id)

    # Same size and mtime: skipped without reading — bytes swapped behind its back stay unseen.
    alpha = root / "alpha.md"
    stat = alpha.stat()
    alpha.write_text("# Alpha\n\nThe alpha survey counted egrets.\n", encoding="utf-8")
    assert alpha.stat().st_size == stat.st_size
    os.utime(alpha, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    second = await mirror.sync()
    assert (second["added"], second["updated"], second["unchanged"]) == (0, 0, 2), second
    assert "herons" in await mirror.markdown(alpha_id)

    # Changed bytes: re-extracted in place (same document id).
    write(alpha, "# Alpha\n\nThe alpha survey now counts cormorants as well.\n")
    # Touched but the same bytes: unchanged.
    beta = root / "sub" / "beta.txt"
    os.utime(beta, ns=(beta.stat().st_atime_ns, beta.stat().st_mtime_ns + 10**9))
    third = await mirror.sync()
    assert (third["updated"], third["unchanged"]) == (1, 1), third
    assert third["details"]["updated"] == [{"path": "alpha.md", "name": "alpha.md"}]
    docs = await mirror.documents()
    assert docs["alpha.md"].id == alpha_id
    assert "cormorants" in await mirror.markdown(alpha_id)
    beta_extracted_at = docs["sub/beta.txt"].extracted_at
    touched_again = await mirror.sync()
    assert touched_again["unchanged"] == 2, touched_again  # the new mtime was remembered

    # Moved and renamed with the same bytes: the document follows, extraction kept.
    moved = root / "archive" / "beta-2019.txt"
    moved.parent.mkdir()
    beta.rename(moved)
    fourth = await mirror.sync()
    assert fourth["details"]["updated"] == [
        {
            "path": "archive/beta-2019.txt",
            "name": "archive/beta-2019.txt",
            "moved_from": "sub/beta.txt",
        }
    ], fourth
    assert fourth["removed"] == 0 and fourth["added"] == 0
    docs = await mirror.documents()
    assert docs["archive/beta-2019.txt"].id == beta_id
    assert docs["archive/beta-2019.txt"].extracted_at == beta_extracted_at

    # Deleted: the document and its original go; the uploaded document stays.
    assert not await mirror.original_gone(alpha_id)
    alpha.unlink()
    fifth = await mirror.sync()
    assert fifth["details"]["removed"] == [{"path": "alpha.md", "name": "alpha.md"}]
    assert set(await mirror.documents()) == {"archive/beta-2019.txt", "uploaded.md"}
    assert await mirror.original_gone(alpha_id)

    # A file that cannot be extracted fails with its reason, now and on the next sync.
    write(root / "empty.md", "   \n")
    for _ in range(2):
        failing = await mirror.sync()
        assert failing["failed"] == 1, failing
        (entry,) = failing["details"]["failed"]
        assert entry["path"] == "empty.md" and entry["reason"].startswith("empty_document")


Shortlist = Callable[..., subprocess.CompletedProcess[str]]


@contextlib.contextmanager
def syncing_as(
    user: str, db_url: str, tmp_path: Path, *, remote: bool
) -> Iterator[tuple[Shortlist, tuple[str, ...]]]:
    """``shortlist`` for a new ``user``, and what `sync` is given to reach the project: nothing
    (the local database), or, ``remote``, the URL of a running service (with the user's token;
    a command given ``--user`` still works locally)."""
    env = cli_environment(db_url, tmp_path / "data")
    created = run_cli(env, "user", "create", user, "--json")
    assert created.returncode == 0, created.stderr
    token = json.loads(created.stdout)["token"]

    def shortlist(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli({**env, "SHORTLIST_TOKEN": token} if remote else env, *args)

    if not remote:
        yield shortlist, ()
        return
    with run_service(db_url, tmp_path / "service") as base_url:
        yield shortlist, ("--url", base_url)


@pytest.mark.parametrize("remote", [False, True], ids=["local", "with-token"])
def test_sync_json_reports_counts_and_exits_2_when_a_file_failed(
    db_url: str, tmp_path: Path, remote: bool
) -> None:
    root = tmp_path / "folder"
    write(root / "good.md", "# Good\n\nA lighthouse log.\n")
    (root / "broken.pdf").write_bytes(b"%PDF-1.7\nnot really a PDF\n")
    with syncing_as("carol", db_url, tmp_path, remote=remote) as (shortlist, where):
        synced = shortlist("sync", str(root), *where, "--json")
        again = shortlist("sync", str(root), *where)
    assert synced.returncode == 2, synced.stderr
    report = json.loads(synced.stdout)
    assert (report["added"], report["failed"]) == (1, 1), report
    assert report["details"]["added"] == [{"path": "good.md", "name": "good.md"}]
    assert report["details"]["failed"][0]["path"] == "broken.pdf"
    assert report["details"]["failed"][0]["reason"].startswith("corrupt_document")
    assert again.returncode == 2
    assert "1 unchanged" in again.stdout and "failed   broken.pdf" in again.stderr


def test_sync_with_a_token_and_no_service_says_so_and_exits_2(tmp_path: Path) -> None:
    root = write(tmp_path / "folder" / "a.md", "# A\n").parent
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{free.getsockname()[1]}"
    env = {**os.environ, "SHORTLIST_TOKEN": "sl_00000000_" + "x" * 40}
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", "sync", str(root), "--url", url, "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO_DIR,
        timeout=60,
        check=False,
    )

    assert result.returncode == 2, result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "service_unreachable"


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


async def test_sync_with_a_read_token_refuses_before_any_work_even_for_an_empty_folder(
    db_url: str, tmp_path: Path
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    async with await psycopg.AsyncConnection.connect(
        db_url, autocommit=True, row_factory=dict_row
    ) as conn:
        owner = await users.create_user(conn, "owner")
        read_token, _ = await users.create_token(conn, owner.user.id, scope="read")
    with run_service(db_url, tmp_path / "service") as base_url:
        result = await anyio.to_thread.run_sync(
            lambda: subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "service.cli",
                    "sync",
                    str(empty),
                    "--url",
                    base_url,
                    "--json",
                ],
                capture_output=True,
                text=True,
                env={**os.environ, "SHORTLIST_TOKEN": read_token},
                cwd=REPO_DIR,
                timeout=60,
                check=False,
            )
        )

    assert result.returncode == 2, result.stderr
    assert json.loads(result.stdout)["error"]["code"] == "token_read_only"


@pytest.mark.parametrize("remote", [False, True], ids=["local", "with-token"])
def test_files_of_one_name_in_other_folders_and_roots_are_documents_of_their_own(
    db_url: str, tmp_path: Path, remote: bool
) -> None:
    """``a/notes.md`` and ``b/notes.md``, two roots both holding ``papers/``, and two roots both
    named ``papers``: every file is named by its path under its root (after the root's label),
    so nothing is "already in this project" — on the first sync or any later one (#24)."""
    work, home = tmp_path / "work", tmp_path / "home"
    one, two = tmp_path / "one" / "papers", tmp_path / "two" / "papers"
    for folder, topic in ((work / "a", "herons"), (work / "b", "egrets")):
        write(folder / "notes.md", f"# Notes\n\nCounting {topic} on the estuary.\n")
    for root, topic in ((work, "tides"), (home, "moraines"), (one, "glaciers"), (two, "fjords")):
        write(root / "papers" / "notes.md", f"# Paper\n\nA survey of {topic}.\n")
    roots = [str(work), str(home), str(one), str(two)]
    with syncing_as("dana", db_url, tmp_path, remote=remote) as (shortlist, where):
        first = shortlist("sync", *roots, *where, "--json")
        again = shortlist("sync", *roots, *where, "--json")
        listed = shortlist("documents", "list", "--user", "dana", "--json")
        shown = shortlist("documents", "show", "work/b/notes.md", "--user", "dana", "--json")

    assert first.returncode == 0, first.stdout + first.stderr
    names = [
        "home/papers/notes.md",
        "one/papers/papers/notes.md",
        "two/papers/papers/notes.md",
        "work/a/notes.md",
        "work/b/notes.md",
        "work/papers/notes.md",
    ]
    added = json.loads(first.stdout)["details"]["added"]
    assert sorted((e["path"], e["name"]) for e in added) == [(name, name) for name in names]
    assert again.returncode == 0, again.stdout + again.stderr
    assert json.loads(again.stdout)["unchanged"] == 6
    documents_listed = json.loads(listed.stdout)["documents"]
    assert sorted(d["name"] for d in documents_listed) == names
    assert {d["status"] for d in documents_listed} == {"ready"}
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["name"] == "work/b/notes.md"


async def test_a_file_whose_path_holds_a_newline_fails_alone_and_is_not_stored(
    settings: Settings, tmp_path: Path
) -> None:
    """The sync plan applies the rule of :mod:`service.services.synced_files` before telling
    any target about a file, so a hostile file name fails with its reason (#24)."""
    root = tmp_path / "odd"
    write(root / "line\nbreak.md", "# Odd\n\nA newline in the name.\n")
    write(root / "fine.md", "# Fine\n\nOk.\n")
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            owner = await users.create_user(conn, "owner")
            principal = await users.authenticate(conn, owner.token)
        report = await folder_sync.sync_folders(runtime, principal, owner.project.id, [root])
        async with connection(runtime.pool) as conn:
            listed = await documents.list_documents(conn, principal, owner.project.id)

    shown = folder_sync.report_json(report)
    assert (shown["added"], shown["failed"]) == (1, 1), shown
    (failed,) = shown["details"]["failed"]
    assert (
        failed["path"] == "line\nbreak.md"
        and "synced file's path contains control" in failed["reason"]
    )
    assert [document.name for document in listed] == ["fine.md"]


async def test_a_path_taken_while_adding_leaves_no_document_and_a_later_sync_adds_the_file(
    settings: Settings, tmp_path: Path
) -> None:
    """The local target adds a document and records the file it mirrors in one statement
    (#24): when another document claimed the path since the plan looked (a concurrent sync),
    the add fails with ``sync_path_taken`` and leaves nothing behind, where it used to leave
    a document no sync knew, which failed that file as "already in this project" for good."""
    root = tmp_path / "mine"
    write(root / "notes.md", "# Notes\n\nThe file this sync adds.\n")
    theirs = tmp_path / "theirs"
    write(theirs / "notes.md", "# Theirs\n\nWhat another sync added first.\n")
    async with open_runtime(settings) as runtime:
        async with connection(runtime.pool) as conn:
            owner = await users.create_user(conn, "owner")
            principal = await users.authenticate(conn, owner.token)
        project_id = owner.project.id
        # Another sync got there first and its document now goes by another name.
        await folder_sync.sync_folders(runtime, principal, project_id, [theirs])
        async with connection(runtime.pool) as conn:
            (first,) = await documents.list_documents(conn, principal, project_id)
            await folder_sync.follow_file(
                conn, principal, first.id, path="notes.md", name="elsewhere.md", size=1, mtime_ns=1
            )
        (item,) = folders.scan([root]).files
        sha = hashlib.sha256(item.path.read_bytes()).hexdigest()
        target = folder_sync.LocalTarget(runtime, principal, project_id)
        with pytest.raises(SyncPathTaken):
            await target.add(item, sha)
        async with connection(runtime.pool) as conn:
            after_race = [
                d.name for d in await documents.list_documents(conn, principal, project_id)
            ]
        await documents.delete_document(runtime, principal, first.id)
        later = folder_sync.report_json(
            await folder_sync.sync_folders(runtime, principal, project_id, [root])
        )
        async with connection(runtime.pool) as conn:
            (kept,) = await documents.list_documents(conn, principal, project_id)

    assert after_race == ["elsewhere.md"]
    assert (later["added"], later["failed"]) == (1, 0), later
    assert kept.name == "notes.md" and kept.sync is not None and kept.sync.path == "notes.md"
