"""``shortlist search --open N``: the result's page (passage marked) or original in the viewer.

The viewer is whatever ``BROWSER`` names, as for any user; here a script that records what it
was handed, so the test reads the very file or link a person's viewer would have opened.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pymupdf

from tests.integration.test_cli import shortlist

RECORDER = "import sys, pathlib; pathlib.Path(sys.argv[1]).write_text(sys.argv[2])"


def _viewer(tmp_path: Path) -> tuple[str, Path]:
    script = tmp_path / "viewer.py"
    script.write_text(RECORDER)
    seen = tmp_path / "seen.txt"
    return f"{sys.executable} {script} {seen} %s", seen


def _glacier_pdf(tmp_path: Path) -> Path:
    doc = pymupdf.open()
    doc.new_page().insert_textbox(pymupdf.Rect(72, 72, 540, 300), "Ice cores hold old air.")
    doc.new_page().insert_textbox(
        pymupdf.Rect(72, 300, 540, 770),
        "The calving front of the glacier moved back nine hundred metres in one season.",
        fontsize=12,
    )
    path = tmp_path / "glaciers.pdf"
    doc.save(path)
    return path


def _yellow(png: bytes) -> int:
    pixmap = pymupdf.Pixmap(png)
    samples, n = pixmap.samples, pixmap.n
    return sum(
        1
        for offset in range(0, len(samples), n * 5)
        if samples[offset] > 200 and samples[offset + 1] > 180 and samples[offset + 2] < 190
        and samples[offset] - samples[offset + 2] > 40
    )  # fmt: skip


def test_open_shows_the_result_page_with_the_passage_marked(db_url: str, tmp_path: Path) -> None:
    shortlist(db_url, tmp_path, "user", "create", "alice")
    ingested = shortlist(db_url, tmp_path, "ingest", str(_glacier_pdf(tmp_path)), "--json")
    assert ingested.returncode == 0, ingested.stderr
    browser, seen = _viewer(tmp_path)
    env = {**os.environ, "DATABASE_URL": db_url, "SHORTLIST_DATA_DIR": str(tmp_path)}
    opened = subprocess.run(
        [sys.executable, "-m", "service.cli", "search", "calving front", "--open", "1"],
        env={**env, "BROWSER": browser, "SHORTLIST_SEARCH__RERANKER": "none"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert opened.returncode == 0, opened.stderr
    target = urlsplit(seen.read_text())
    assert target.scheme == "file" and target.path.endswith(".png")
    assert _yellow(Path(target.path).read_bytes()) > 0
    assert "[1] glaciers.pdf — p. 2" in opened.stdout

    too_far = shortlist(db_url, tmp_path, "search", "calving front", "--open", "9", "--json")
    assert too_far.returncode == 2
    assert json.loads(too_far.stdout)["error"]["code"] == "invalid_request"


def test_open_through_the_service_shows_a_page_or_the_original_at_its_page(
    db_url: str, tmp_path: Path
) -> None:
    from tests.browser.live_service import run_service

    created = json.loads(shortlist(db_url, tmp_path, "user", "create", "alice", "--json").stdout)
    notes = tmp_path / "fjord.md"
    notes.write_text("# Fjord\n\nSeals rest on the ice floes of the fjord.\n")
    ingested = shortlist(db_url, tmp_path, "ingest", str(_glacier_pdf(tmp_path)), str(notes))
    assert ingested.returncode == 0, ingested.stderr
    browser, seen = _viewer(tmp_path)
    with run_service(db_url, tmp_path, search={"reranker": "none"}) as base_url:
        env = {**os.environ, "SHORTLIST_TOKEN": created["token"], "BROWSER": browser}

        def search(query: str) -> subprocess.CompletedProcess[str]:
            return subprocess.run(
                [sys.executable, "-m", "service.cli", "search", query, "--open", "1",
                 "--url", base_url],
                env=env, capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip

        page = search("calving front")
        assert page.returncode == 0, page.stderr
        target = urlsplit(seen.read_text())
        assert target.scheme == "file"
        assert _yellow(Path(target.path).read_bytes()) > 0
        original = search("seals ice floes")
        assert original.returncode == 0, original.stderr
        link = seen.read_text()
        assert link.startswith(base_url) and link.endswith("#page=1")
