from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import psycopg
import pytest

from tests.support.abstracts import add_ready_abstracts


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
    assert set(document) == {"user", "token", "scope", "project"}
    assert document["scope"] == "write"
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
    reader = shortlist(
        db_url, tmp_path, "token", "create", "--user", "alice", "--scope", "read", "--json"
    )
    bad_scope = shortlist(db_url, tmp_path, "token", "create", "--user", "alice", "--scope", "x")
    tokens = json.loads(
        shortlist(db_url, tmp_path, "token", "list", "--user", "alice", "--json").stdout
    )
    revoked = shortlist(db_url, tmp_path, "token", "revoke", created["token"], "--json")
    again = shortlist(db_url, tmp_path, "token", "revoke", created["token"], "--json")

    assert reader.returncode == 0, reader.stderr
    assert json.loads(reader.stdout)["scope"] == "read"
    assert bad_scope.returncode == 2 and "read" in bad_scope.stderr
    assert sorted(t["scope"] for t in tokens["tokens"]) == ["read", "write"]
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
    assert document["server"]["public_url"] == "http://127.0.0.1:8000", "what is in effect"


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
    from tests.unit.extract import samples

    scan = tmp_path / "blank-scan.pdf"
    scan.write_bytes(samples.pdf_pages("s"))  # a scanned blank sheet: nothing to recognise
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", "extract", str(scan), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert result.returncode == 2
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "scanned_pdf"
    assert "found nothing legible" in error["message"]


def test_extract_prints_the_text_recognised_in_a_scan() -> None:
    from tests.support.paths import CORPUS_DIR

    scan = CORPUS_DIR / "scanned_image_only" / "linn.pdf"
    if not scan.exists():
        pytest.skip("no shared corpus")
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", "extract", str(scan)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )

    assert result.returncode == 0, result.stderr
    assert "<!-- page 1 -->" in result.stdout
    assert "The LinnSequencer is a state-of-the-art composition" in result.stdout


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
    assert body["insufficient_evidence"] is False
    assert body["results"][0]["relevance_label"] in ("medium", "high")
    text = shortlist(db_url, tmp_path, "search", "mitochondria ATP", "--top-k", "1")
    assert text.stdout.startswith("[1] cells.pdf — p. ")
    assert "(relevance " in text.stdout.splitlines()[0]
    absent = shortlist(db_url, tmp_path, "search", "sourdough bread oven temperature for ATP")
    assert absent.stdout.startswith("The documents do not appear to answer this")
    tuned = shortlist(db_url, tmp_path, "tune", "--questions", "4", "--json")
    assert tuned.returncode == 0, tuned.stderr
    report = json.loads(tuned.stdout)
    assert report["documents"] == 1 and report["questions"] >= 1
    assert report["keeps"][-1] == {"keep": report["passages"], "agreement": 1.0}
    assert report["smallest_keep"] is not None


def _add_ready_abstracts(db_url: str, count: int) -> None:
    """``count`` SciFact abstracts as ready documents of the only project (no extraction)."""
    with psycopg.connect(db_url, autocommit=True) as conn:
        (project_id,) = conn.execute("SELECT id FROM projects").fetchone() or (None,)
    add_ready_abstracts(db_url, project_id, count)


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
        stderr=subprocess.PIPE,
        text=True,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        printed = process.stdout.readline()
        printed_at = time.monotonic()
        process.wait(timeout=120)
        exited_at = time.monotonic()
        said = process.stderr.read()

    assert process.returncode == 0
    body = json.loads(printed)
    assert body["reranker"] == "local"
    assert body["results"], "the search found nothing to print"
    # One-shot: every candidate scored before answering, and said to be local.
    assert (body["ranking"], body["reranked"]) == ("reranked", True)
    assert body["unscored"] == 0 and body["scored"] == body["candidates"] > 0
    assert "searched locally" in said
    assert exited_at - printed_at < 10.0, f"exited {exited_at - printed_at:.1f} s after printing"
    assert printed_at - started < 60.0


def test_upload_sends_files_at_once_and_shows_each_one_settle(db_url: str, tmp_path: Path) -> None:
    from tests.browser.live_service import run_service

    pdf = _two_page_pdf(tmp_path)
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "minutes.md").write_text("# Minutes\n\nThe board approved the budget.\n")
    (notes / "program.exe").write_bytes(b"MZ\x90\x00 not a document")
    created = json.loads(shortlist(db_url, tmp_path, "user", "create", "alice", "--json").stdout)
    command = [sys.executable, "-m", "service.cli", "upload", str(pdf), str(notes / "minutes.md")]

    with run_service(db_url, tmp_path / "service") as base_url:
        env = {**os.environ, "DATABASE_URL": db_url, "SHORTLIST_TOKEN": created["token"]}
        result = subprocess.run(
            [*command, str(notes / "program.exe"), "--url", base_url, "--json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        again = subprocess.run(
            [*command[:5], "--url", base_url, "--json", "--concurrency", "1"],
            env=env,
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )

    assert result.returncode == 2, result.stderr  # program.exe was refused
    entries = json.loads(result.stdout)
    assert [(e["document"]["name"], e["status"]) for e in entries] == [
        ("cells.pdf", "ready"),
        ("minutes.md", "ready"),
        ("program.exe", "error"),
    ]
    assert entries[2]["error"]["code"] == "unsupported_file_type"
    log = result.stderr.splitlines()  # not a terminal: a line per change of state
    assert log.index("minutes.md: sending 0%") < log.index("cells.pdf: ready, 2 pages"), (
        "the second file was sent while the first was still being extracted"
    )
    assert "minutes.md: ready, 1 page" in log
    assert any(line.startswith("program.exe: error — ") for line in log)
    assert again.returncode == 2
    assert json.loads(again.stdout)[0]["error"]["code"] == "duplicate_document_name"


def test_import_fetches_web_addresses_through_a_running_service(
    db_url: str, tmp_path: Path
) -> None:
    from tests.browser.live_service import run_service
    from tests.support.web_server import Reply, WebServer

    pdf = _two_page_pdf(tmp_path)
    site = WebServer(
        {"/cells.pdf": Reply(200, {"Content-Type": "application/pdf"}, pdf.read_bytes())}
    )
    created = json.loads(shortlist(db_url, tmp_path, "user", "create", "alice", "--json").stdout)
    fetch = {"allow_http": True, "allow_private_networks": True}
    try:
        with run_service(db_url, tmp_path / "service", fetch=fetch) as base_url:
            env = {**os.environ, "DATABASE_URL": db_url, "SHORTLIST_TOKEN": created["token"]}
            result = subprocess.run(
                [
                    sys.executable,
                    *("-m", "service.cli", "import", f"{site.url}/cells.pdf"),
                    *(f"{site.url}/missing.pdf", "--url", base_url, "--json"),
                ],
                env=env,
                capture_output=True,
                text=True,
                timeout=180,
                check=False,
            )
    finally:
        site.close()

    assert result.returncode == 2, "one of the two addresses could not be fetched"
    fetched, missing = json.loads(result.stdout)
    assert fetched["status"] == "ready"
    assert fetched["document"]["name"] == "cells.pdf"
    assert missing["status"] == "error"
    assert missing["error"]["code"] == "url_unreachable"


def test_a_folder_is_ingested_and_its_documents_listed_shown_reextracted_and_deleted(
    db_url: str, tmp_path: Path
) -> None:
    folder = tmp_path / "notes"
    (folder / "deep").mkdir(parents=True)
    (folder / "a.md").write_text("# Alpha\n\nGlaciers retreat.\n", encoding="utf-8")
    (folder / "deep" / "b.txt").write_text("Moraines remain.\n", encoding="utf-8")
    (folder / "deep" / "tool.exe").write_bytes(b"MZ" * 10)  # not a supported kind: not sent
    (folder / ".hidden.md").write_text("# Secret\n", encoding="utf-8")
    (folder / "~$a.md").write_text("lock\n", encoding="utf-8")
    shortlist(db_url, tmp_path, "user", "create", "alice")

    ingested = shortlist(db_url, tmp_path, "ingest", str(folder), "--json")
    assert ingested.returncode == 0, ingested.stderr
    named = sorted(e["document"]["name"] for e in json.loads(ingested.stdout))
    assert named == ["a.md", "deep/b.txt"]  # a folder's files are named by their path in it

    listed = json.loads(shortlist(db_url, tmp_path, "documents", "list", "--json").stdout)
    assert sorted(d["name"] for d in listed["documents"]) == ["a.md", "deep/b.txt"]
    assert {d["status"] for d in listed["documents"]} == {"ready"}

    shown = shortlist(db_url, tmp_path, "documents", "show", "a.md", "--json")
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["page_count"] == 1

    again = shortlist(db_url, tmp_path, "documents", "reextract", "a.md", "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["status"] == "pending"

    deleted = shortlist(db_url, tmp_path, "documents", "delete", "deep/b.txt")
    assert deleted.returncode == 0, deleted.stderr
    assert "Deleted 'deep/b.txt'" in deleted.stdout
    missing = shortlist(db_url, tmp_path, "documents", "show", "deep/b.txt", "--json")
    assert missing.returncode == 2
    assert json.loads(missing.stdout)["error"]["code"] == "document_not_found"
    listed = json.loads(shortlist(db_url, tmp_path, "documents", "list", "--json").stdout)
    assert [d["name"] for d in listed["documents"]] == ["a.md"]


def test_a_document_id_needs_no_project_even_when_none_is_the_default(
    db_url: str, tmp_path: Path
) -> None:
    """As in MCP's read_document: a project is needed only to look a document up by name."""
    note = tmp_path / "a.md"
    note.write_text("# Alpha\n\nGlaciers retreat.\n", encoding="utf-8")
    shortlist(db_url, tmp_path, "user", "create", "alice")
    shortlist(db_url, tmp_path, "project", "create", "research", "--user", "alice")
    ingested = shortlist(db_url, tmp_path, "ingest", str(note), "--project", "research", "--json")
    (entry,) = json.loads(ingested.stdout)
    with psycopg.connect(db_url, autocommit=True) as conn:  # two projects, neither "default"
        conn.execute("UPDATE projects SET name = 'archive' WHERE name = 'default'")

    by_id = shortlist(db_url, tmp_path, "documents", "show", entry["document"]["id"], "--json")
    by_name = shortlist(db_url, tmp_path, "documents", "show", "a.md", "--json")
    in_project = shortlist(
        db_url, tmp_path, "documents", "show", "a.md", "--project", "research", "--json"
    )
    misspelt = shortlist(
        db_url, tmp_path, "documents", "show", entry["document"]["id"], "--project", "reserch"
    )

    assert by_id.returncode == 0, by_id.stderr
    assert json.loads(by_id.stdout)["name"] == "a.md"
    assert by_name.returncode == 2
    assert "several projects" in json.loads(by_name.stdout)["error"]["message"]
    assert in_project.returncode == 0, in_project.stderr
    assert json.loads(in_project.stdout)["id"] == entry["document"]["id"]
    assert misspelt.returncode == 2
    assert "no project named 'reserch'" in misspelt.stderr


def test_a_blank_search_query_is_a_user_error_that_exits_2(db_url: str, tmp_path: Path) -> None:
    assert shortlist(db_url, tmp_path, "user", "create", "alice").returncode == 0

    result = shortlist(db_url, tmp_path, "search", "   ", "--json")

    assert result.returncode == 2, result.stdout + result.stderr
    assert json.loads(result.stdout) == {
        "error": {
            "code": "empty_query",
            "message": "The query is empty: type some words to search for.",
        }
    }


def test_upload_with_no_service_running_says_so_and_exits_2(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}"
    note = tmp_path / "note.md"
    note.write_text("# Note\n", encoding="utf-8")
    env = {**os.environ, "SHORTLIST_TOKEN": "sl_abcdefgh_" + "x" * 43}
    result = subprocess.run(
        [sys.executable, "-m", "service.cli", "upload", str(note), "--url", url, "--json"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stdout + result.stderr
    error = json.loads(result.stdout)["error"]
    assert error["code"] == "service_unreachable"
    assert error["message"].startswith(f"Cannot reach the Shortlist service at {url}")
    assert "shortlist serve" in error["message"]
    assert "Traceback" not in result.stderr


def test_serve_on_a_busy_port_says_so_and_exits_2_before_announcing(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = shortlist(
            "postgresql://nobody@127.0.0.1:1/none", tmp_path, "serve", "--port", str(port)
        )

    assert result.returncode == 2, result.stderr
    assert result.stderr.strip() == f"Error: port {port} is in use; choose another with --port"
    assert "starting" not in result.stdout


def test_search_and_mentions_go_through_the_running_service_and_answer_as_rest_does(
    db_url: str, tmp_path: Path
) -> None:
    from tests.browser.live_service import run_service

    created = json.loads(shortlist(db_url, tmp_path, "user", "create", "alice", "--json").stdout)
    _add_ready_abstracts(db_url, 12)
    query = "vitamin D deficiency and bone density"
    with run_service(db_url, tmp_path / "service", search={"reranker": "local"}) as base_url:
        auth = {"Authorization": f"Bearer {created['token']}"}
        project = created["project"]["id"]
        _wait_until_warm(base_url, auth)
        rest = httpx.post(
            f"{base_url}/api/projects/{project}/search", json={"query": query}, headers=auth
        ).json()
        rest_mentions = httpx.get(
            f"{base_url}/api/projects/{project}/mentions",
            params={"terms": ["vitamin"]},
            headers=auth,
        ).json()
        env = {
            **os.environ,
            "SHORTLIST_TOKEN": created["token"],
            "DATABASE_URL": "postgresql://unused@127.0.0.1:1/x",
        }

        def through(*args: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "service.cli", *args, "--url", base_url],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )

        cli = through("search", query, "--json")
        cli_mentions = through("mentions", "vitamin", "--json")
        text = through("search", query, "--top-k", "1")

    assert cli.returncode == 0, cli.stderr
    answer = json.loads(cli.stdout)
    assert [r["chunk_id"] for r in answer["results"]] == [r["chunk_id"] for r in rest["results"]]
    assert answer["insufficient_evidence"] == rest["insufficient_evidence"]
    assert (answer["ranking"], answer["reranked"]) == (rest["ranking"], rest["reranked"])
    assert "locally" not in cli.stderr
    assert cli_mentions.returncode == 0, cli_mentions.stderr
    assert json.loads(cli_mentions.stdout) == rest_mentions
    assert "\n[1] " in "\n" + text.stdout, text.stdout


def _wait_until_warm(base_url: str, auth: dict[str, str], within: float = 120.0) -> None:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        projects = httpx.get(f"{base_url}/api/status", headers=auth).json()["projects"]
        if projects and all(p["state"] == "warm" for p in projects):
            return
        time.sleep(0.5)
    raise AssertionError("the project did not warm up in time")


@pytest.mark.parametrize(
    ("name", "data"), [("data.json", b'{"a": 1}'), ("bundle.zip", b"PK\x03\x04")]
)
def test_extract_refuses_the_kinds_an_upload_refuses(
    tmp_path: Path, name: str, data: bytes
) -> None:
    path = tmp_path / name
    path.write_bytes(data)

    result = shortlist(
        "postgresql://unused@127.0.0.1:1/x", tmp_path, "extract", str(path), "--json"
    )

    assert result.returncode == 2, result.stdout
    assert json.loads(result.stdout)["error"]["code"] == "unsupported_file_type"


def test_a_read_token_adds_and_changes_nothing_through_the_local_cli(
    db_url: str, tmp_path: Path
) -> None:
    """``shortlist ingest`` reaches the database directly, as SHORTLIST_TOKEN's user; a read
    token is refused there as at every other door: exit 2, ``token_read_only``, no document
    (#24). Deleting and re-extracting (the other local writes) are refused the same way."""
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "a.md").write_text("# Alpha\n\nGlaciers retreat.\n", encoding="utf-8")
    shortlist(db_url, tmp_path, "user", "create", "alice")
    assert shortlist(db_url, tmp_path, "ingest", str(folder / "a.md")).returncode == 0
    reader = json.loads(
        shortlist(
            db_url, tmp_path, "token", "create", "--user", "alice", "--scope", "read", "--json"
        ).stdout
    )["token"]
    (folder / "b.md").write_text("# Beta\n\nMoraines remain.\n", encoding="utf-8")

    def as_reader(*args: str) -> subprocess.CompletedProcess[str]:
        env = {
            **os.environ,
            "DATABASE_URL": db_url,
            "SHORTLIST_DATA_DIR": str(tmp_path),
            "SHORTLIST_TOKEN": reader,
        }
        return subprocess.run(
            [sys.executable, "-m", "service.cli", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    ingested = as_reader("ingest", str(folder), "--json")
    said = as_reader("ingest", str(folder / "b.md"))
    deleted = as_reader("documents", "delete", "a.md", "--json")
    reextracted = as_reader("documents", "reextract", "a.md", "--json")
    listed = as_reader("documents", "list", "--json")

    assert ingested.returncode == 2, ingested.stderr
    assert json.loads(ingested.stdout)["error"]["code"] == "token_read_only"
    assert said.returncode == 2 and "may only read" in said.stderr, said.stderr
    for refused in (deleted, reextracted):
        assert refused.returncode == 2, refused.stderr
        assert json.loads(refused.stdout)["error"]["code"] == "token_read_only"
    assert listed.returncode == 0, listed.stderr
    documents = json.loads(listed.stdout)["documents"]
    assert [(d["name"], d["status"]) for d in documents] == [("a.md", "ready")]
