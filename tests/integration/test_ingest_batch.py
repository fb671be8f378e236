"""`shortlist ingest` stores small text files in batches (#28: ingest at >= 200 small files/s):
each file of a batch ends as it would alone — the same row, text, passage terms, counts and
announcement — and each refusal or failure is its own, against a real PostgreSQL and the
local blob store."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from uuid import UUID

import psycopg
import pytest
from psycopg.rows import dict_row

from service.runtime import Runtime, open_runtime
from service.services import users
from service.services.extraction import FAILED_CODE, READY_CHANNEL
from service.services.folders import NamedFile
from service.services.ingest import BATCH_FILES, ingest_batch, ingest_file, ingest_files
from service.settings import Settings
from service.storage.blobs import LocalBlobStore
from service.storage.db import connection

pytestmark = pytest.mark.anyio


def note(folder: Path, name: str, text: str, *, stored_as: str | None = None) -> NamedFile:
    """A file written at ``folder / name``, sent under ``stored_as`` (else ``name``)."""
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return NamedFile(path, stored_as or name)


def field_note(n: int) -> str:
    return (
        f"# Field note {n}\n\nTidal flat survey {n}: {n % 17} oystercatchers, {n % 5} curlews "
        f"and a spoonbill near marker {n * 7}.\n"
    )


@pytest.fixture
async def runtime(settings: Settings) -> AsyncIterator[Runtime]:
    async with open_runtime(settings, background=False) as opened:
        yield opened


async def _rows(conn: psycopg.AsyncConnection[Any], sql: str, *params: object) -> list[Any]:
    return await (await conn.execute(sql, params)).fetchall()  # type: ignore[arg-type]


async def _postings(conn: psycopg.AsyncConnection[Any], document_id: UUID) -> list[tuple[Any, ...]]:
    rows = await _rows(
        conn,
        "SELECT term, passage, tf, length FROM lexical_postings WHERE document_id = %s"
        " ORDER BY 1, 2",
        document_id,
    )
    return [tuple(row.values()) for row in rows]


async def _stored_as(conn: psycopg.AsyncConnection[Any], document_id: UUID) -> dict[str, Any]:
    """What a document's row and its lexical rows say, but its ids and times."""
    [row] = await _rows(
        conn,
        "SELECT d.name, d.status, d.kind, d.content_type, d.size_bytes, d.markdown,"
        " d.content_hash, d.page_count, d.warnings, l.config, l.language, l.passages, l.terms"
        " FROM documents d LEFT JOIN lexical_documents l ON l.document_id = d.id"
        " WHERE d.id = %s",
        document_id,
    )
    return {**row, "postings": await _postings(conn, document_id)}


async def _check_counts(conn: psycopg.AsyncConnection[Any], project_id: UUID) -> None:
    """The counts the triggers keep (migrations 019 and 021) are what the rows give."""
    kept = await _rows(
        conn, "SELECT term, passages FROM lexical_terms WHERE project_id = %s", project_id
    )
    counted = await _rows(
        conn,
        "SELECT term, count(*) AS passages FROM lexical_postings WHERE project_id = %s"
        " GROUP BY term",
        project_id,
    )
    assert kept and {r["term"]: r["passages"] for r in kept} == {
        r["term"]: r["passages"] for r in counted
    }
    stats = await _rows(
        conn,
        "SELECT documents, passages, terms FROM lexical_project_stats WHERE project_id = %s",
        project_id,
    )
    summed = await _rows(
        conn,
        "SELECT count(*) AS documents, sum(passages) AS passages, sum(terms) AS terms"
        " FROM lexical_documents WHERE project_id = %s",
        project_id,
    )
    assert [tuple(r.values()) for r in stats] == [tuple(r.values()) for r in summed]


def _originals(runtime: Runtime) -> set[str]:
    """The keys of every original in the local store."""
    store = runtime.blobs
    assert isinstance(store, LocalBlobStore)
    return {
        path.relative_to(store.root).as_posix()
        for path in store.root.rglob("*")
        if path.is_file() and not path.name.startswith(".")
    }


async def test_a_batch_stores_each_file_as_alone_and_refuses_each_on_its_own(
    runtime: Runtime, conn: psycopg.AsyncConnection[Any], tmp_path: Path
) -> None:
    async with connection(runtime.pool) as pooled:
        owner = await users.create_user(pooled, "owner")
        other = await users.create_user(pooled, "other")
        principal = await users.authenticate(pooled, owner.token)
    project = owner.project
    files = tmp_path / "files"
    first = await ingest_file(runtime, project, note(files, "taken.md", "# Taken\n\nFirst.\n").path)
    assert first.outcome is not None and first.outcome.status == "ready"

    (files / "folder.md").mkdir()
    good = [note(files, f"note-{n}.md", field_note(n)) for n in range(6)]
    sent = [
        good[0],
        note(files, "TAKEN.md ", "# Taken\n\nAgain.\n"),  # the name is taken (trimmed, any case)
        good[1],
        note(files, "twin.md", "# Twin\n\nOne.\n"),
        note(files, "empty.md", ""),  # refused: empty
        NamedFile(files / "folder.md", "folder.md"),  # cannot be read
        note(files, "copy/twin.md", "# Twin\n\nTwo.\n", stored_as="Twin.md"),  # as the earlier
        good[2],
        note(files, "fake.md", "%PDF-1.4\nnot really a PDF\n"),  # read as a PDF: corrupt
        *good[3:],
    ]

    listener = await psycopg.AsyncConnection.connect(
        conn.info.dsn, autocommit=True, row_factory=dict_row
    )
    async with listener:
        await listener.execute(f"LISTEN {READY_CHANNEL}")
        results = await ingest_files(runtime, principal, project, sent)
        announced = []
        async for notice in listener.notifies(timeout=1.0):
            announced.append(notice.payload)

    assert [result.name for result in results] == [file.name for file in sent]
    by_name = {result.name: result for result in results}
    refused = {
        name: by_name[name].error.code  # type: ignore[union-attr]
        for name in ("TAKEN.md ", "empty.md", "folder.md", "Twin.md")
    }
    assert refused == {
        "TAKEN.md ": "duplicate_document_name",
        "empty.md": "invalid_request",
        "folder.md": "file_unreadable",
        "Twin.md": "duplicate_document_name",
    }
    assert all(by_name[name].document is None for name in refused)
    fake = by_name["fake.md"]
    assert fake.error is None and fake.outcome is not None and fake.document is not None
    assert (fake.outcome.status, fake.outcome.error_code) == ("error", "corrupt_document")
    ready = [by_name[file.name] for file in [*good, sent[3]]]
    assert all(r.outcome is not None and r.outcome.status == "ready" for r in ready)
    ready_ids = [r.document.id for r in ready if r.document is not None]
    assert sorted(announced) == sorted(map(str, ready_ids))  # one announcement each

    # Each stored document is what ingesting its file alone stores (in another project).
    for result in ready:
        assert result.document is not None
        alone = await ingest_file(runtime, other.project, result.path, name=result.name)
        assert alone.document is not None
        batched = await _stored_as(conn, result.document.id)
        assert batched["status"] == "ready" and batched["postings"]
        assert batched == await _stored_as(conn, alone.document.id)
    await _check_counts(conn, project.id)

    # No original is left behind by a refused file; each document's is where its row says.
    documents = await _rows(
        conn,
        "SELECT name, object_key, status FROM documents WHERE project_id = %s",
        project.id,
    )
    assert sorted(row["name"] for row in documents) == sorted(
        ["taken.md", "twin.md", "fake.md", *(file.name for file in good)]
    )
    other_keys = await _rows(
        conn, "SELECT object_key FROM documents WHERE project_id = %s", other.project.id
    )
    assert _originals(runtime) == {row["object_key"] for row in [*documents, *other_keys]}


async def test_more_files_than_a_batch_are_all_stored_in_their_order(
    runtime: Runtime, conn: psycopg.AsyncConnection[Any], tmp_path: Path
) -> None:
    async with connection(runtime.pool) as pooled:
        owner = await users.create_user(pooled, "owner")
        principal = await users.authenticate(pooled, owner.token)
    batch = 16  # the default's rule on a smaller batch: the default is thousands of files
    assert batch < BATCH_FILES
    sent = [note(tmp_path, f"n{n:03d}.md", field_note(n)) for n in range(2 * batch + 5)]
    results = await ingest_files(runtime, principal, owner.project, sent, batch_files=batch)
    assert [r.name for r in results] == [file.name for file in sent]
    assert all(r.outcome is not None and r.outcome.status == "ready" for r in results)
    [row] = await _rows(
        conn,
        "SELECT count(*) AS n FROM lexical_documents WHERE project_id = %s",
        owner.project.id,
    )
    assert row["n"] == len(sent)
    await _check_counts(conn, owner.project.id)


async def test_a_document_the_database_refuses_fails_alone(
    runtime: Runtime, conn: psycopg.AsyncConnection[Any], tmp_path: Path
) -> None:
    """A real refusal by PostgreSQL (a trigger standing in for a constraint one document
    breaks) fails the batch's transaction; the batch is then saved one document at a time,
    and only that document ends ``error``."""
    await conn.execute(
        """
        CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION 'poison refused' USING ERRCODE = 'check_violation';
        END $$;
        CREATE TRIGGER refuse_poison BEFORE UPDATE ON documents FOR EACH ROW
            WHEN (NEW.name = 'poison.md' AND NEW.status = 'ready')
            EXECUTE FUNCTION refuse_poison();
        """
    )
    async with connection(runtime.pool) as pooled:
        owner = await users.create_user(pooled, "owner")
    sent = [
        note(tmp_path, "before.md", field_note(1)),
        note(tmp_path, "poison.md", field_note(2)),
        note(tmp_path, "after.md", field_note(3)),
    ]
    results = await ingest_batch(runtime, owner.project, sent)

    outcomes = {r.name: r.outcome for r in results}
    assert {name: o.status for name, o in outcomes.items() if o is not None} == {
        "before.md": "ready",
        "poison.md": "error",
        "after.md": "ready",
    }
    rows = await _rows(
        conn, "SELECT name, status, error_code FROM documents WHERE project_id = %s ORDER BY 1",
        owner.project.id,
    )  # fmt: skip
    assert [tuple(row.values()) for row in rows] == [
        ("after.md", "ready", None),
        ("before.md", "ready", None),
        ("poison.md", "error", FAILED_CODE),
    ]
    await _check_counts(conn, owner.project.id)


async def test_documents_get_time_ordered_ids(
    runtime: Runtime, conn: psycopg.AsyncConnection[Any], tmp_path: Path
) -> None:
    """Migration 022: a new document's id is a UUID version 7 whose first 48 bits are its
    creation time in milliseconds, so a later document's postings sort after an earlier
    one's (through the batch's insert and a single file's alike)."""
    async with connection(runtime.pool) as pooled:
        owner = await users.create_user(pooled, "owner")
        principal = await users.authenticate(pooled, owner.token)
    alone = await ingest_file(
        runtime, owner.project, note(tmp_path, "first.md", field_note(0)).path
    )
    batched = await ingest_files(
        runtime,
        principal,
        owner.project,
        [note(tmp_path, f"n{n}.md", field_note(n)) for n in range(5)],
    )
    rows = await _rows(
        conn,
        "SELECT id, (extract(epoch FROM created_at) * 1000)::bigint AS created_ms"
        " FROM documents WHERE project_id = %s ORDER BY created_at, id",
        owner.project.id,
    )
    assert len(rows) == 1 + len(batched)
    assert alone.document is not None and rows[0]["id"] == alone.document.id
    stamps = []
    for row in rows:
        document_id: UUID = row["id"]
        assert document_id.version == 7
        stamps.append(document_id.int >> 80)
        assert abs(stamps[-1] - row["created_ms"]) < 5_000  # the row's own time, within 5 s
    assert stamps == sorted(stamps)
    assert len({row["id"] for row in rows}) == len(rows)
