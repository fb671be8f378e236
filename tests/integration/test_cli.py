from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from tests.support.paths import SCIFACT_DIR


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


def _two_page_pdf(tmp_path: Path) -> Path:
    import pymupdf

    filler = " ".join(["Cells keep their membranes intact while dividing."] * 30)
    doc = pymupdf.open()
    for text in (
        f"Photosynthesis happens in chloroplasts. {filler}",
        f"Mitochondria make ATP. {filler}",
    ):
        doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 540, 770), text, fontsize=11)
    path = tmp_path / "cells.pdf"
    doc.save(path)
    return path


def test_extract_prints_page_marked_markdown(tmp_path: Path) -> None:
    pdf = _two_page_pdf(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", "extract", str(pdf), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["page_count"] == 2
    assert "<!-- page 2 -->" in document["markdown"]
    assert "Mitochondria" in document["markdown"]


def test_extract_explains_why_a_scan_cannot_be_searched(tmp_path: Path) -> None:
    from tests.support.paths import CORPUS_DIR

    scan = CORPUS_DIR / "scanned_image_only" / "c02-22.pdf"
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", "extract", str(scan), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 2
    assert json.loads(result.stdout)["error"]["code"] == "scanned_pdf"


def test_ingest_then_search_returns_the_cited_page(db_url: str, tmp_path: Path) -> None:
    pdf = _two_page_pdf(tmp_path)
    (tmp_path / "notes.txt").write_text("", encoding="utf-8")
    shortlist(db_url, tmp_path, "user", "create", "alice")

    ingested = shortlist(
        db_url, tmp_path, "ingest", str(pdf), str(tmp_path / "notes.txt"), "--json"
    )
    found = shortlist(db_url, tmp_path, "search", "mitochondria ATP", "--json", "--top-k", "3")

    entries = json.loads(ingested.stdout)
    assert ingested.returncode == 2, "one of the two files could not be ingested"
    assert [e["status"] for e in entries] == ["ready", "error"]
    assert entries[0]["document"]["name"] == "cells.pdf"
    assert entries[1]["error"]["code"] in ("empty_document", "invalid_request")
    body = json.loads(found.stdout)
    assert found.returncode == 0, found.stderr
    assert body["results"][0]["document"]["name"] == "cells.pdf"
    assert 2 in range(body["results"][0]["pages"][0], body["results"][0]["pages"][1] + 1)
    assert set(body) >= {"results", "sources", "reranker", "reranked", "warnings"}


def _add_ready_abstracts(db_url: str, count: int) -> None:
    """``count`` SciFact abstracts as ready documents of the only project (no extraction)."""
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for _, line in zip(range(count), lines, strict=False)]
    with psycopg.connect(db_url, autocommit=True) as conn:
        (project_id,) = conn.execute("SELECT id FROM projects").fetchone() or (None,)
        for row in rows:
            markdown = f"<!-- page 1 -->\n# {row['title']}\n\n{row['text']}\n"
            conn.execute(
                "INSERT INTO documents (project_id, name, content_type, size_bytes, status,"
                " markdown, content_hash, kind, page_count, extracted_at)"
                " VALUES (%s, %s, 'text/markdown', %s, 'ready', %s, %s, 'text', 1, now())",
                (
                    project_id,
                    f"{row['_id']}.md",
                    len(markdown),
                    markdown,
                    hashlib.sha256(markdown.encode()).hexdigest(),
                ),
            )


def test_search_exits_promptly_after_printing_without_warming_the_project(
    db_url: str, tmp_path: Path
) -> None:
    shortlist(db_url, tmp_path, "user", "create", "alice")
    _add_ready_abstracts(db_url, 400)  # ~800 passages: minutes of embedding on 2 busy cores
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SHORTLIST_DATA_DIR": str(tmp_path),
        "SHORTLIST_SEARCH__RERANKER": "local",
    }
    env.pop("COHERE_API_KEY", None)
    started = time.monotonic()
    with subprocess.Popen(
        [sys.executable, "-m", "service.cli", "search", "vitamin D deficiency", "--json"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    ) as process:
        assert process.stdout is not None
        printed = process.stdout.readline()
        printed_at = time.monotonic()
        process.wait(timeout=120)
        exited_at = time.monotonic()

    assert process.returncode == 0
    body = json.loads(printed)
    assert body["reranker"] == "local"
    assert body["results"], "the search found nothing to print"
    # Generous: interpreter and runtime teardown. Warming the project would take minutes.
    assert exited_at - printed_at < 10.0, f"exited {exited_at - printed_at:.1f} s after printing"
    assert printed_at - started < 60.0


def test_upload_goes_through_the_grant_flow_to_a_running_service(
    db_url: str, tmp_path: Path
) -> None:
    from tests.browser.live_service import run_service

    pdf = _two_page_pdf(tmp_path)
    created = json.loads(shortlist(db_url, tmp_path, "user", "create", "alice", "--json").stdout)

    with run_service(db_url, tmp_path / "service") as base_url:
        env = {**os.environ, "DATABASE_URL": db_url, "SHORTLIST_TOKEN": created["token"]}
        result = subprocess.run(
            [sys.executable, "-m", "service.cli", "upload", str(pdf), "--url", base_url, "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        again = subprocess.run(
            [sys.executable, "-m", "service.cli", "upload", str(pdf), "--url", base_url, "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    assert result.returncode == 0, result.stderr
    [entry] = json.loads(result.stdout)
    assert entry["status"] == "ready"
    assert entry["document"]["name"] == "cells.pdf"
    assert "cells.pdf" in result.stderr, "the progress bar is drawn on stderr"
    assert again.returncode == 2
    assert json.loads(again.stdout)[0]["error"]["code"] == "duplicate_document_name"
