"""Extraction jobs survive a killed worker and a document deleted mid-job."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg

from service.cli.client import ShortlistClient
from service.jobs import sweep_interval
from tests.browser.live_service import run_service
from tests.integration.documents.conftest import make_pdf, new_user

# Enough pages that extraction takes a few seconds: a window to act in mid-job.
FILLER = " ".join(["Glaciers carve valleys over many thousands of years."] * 25)
LONG_PDF = make_pdf([f"Page {n} of the survey. {FILLER}" for n in range(1, 13)])
#: The workers' dead-worker timeout, small so a test waits seconds, not half a minute.
DEAD_AFTER = 3


def _start_worker(db_url: str, data_dir: Path, log: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DATABASE_URL": db_url,
        "SHORTLIST_DATA_DIR": str(data_dir),
        "SHORTLIST_SEARCH__RERANKER": "none",
        "SHORTLIST_JOBS__DEAD_WORKER_AFTER_SECONDS": str(DEAD_AFTER),
    }
    with log.open("ab") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "service.cli", "worker"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _wait_for_status(client: ShortlistClient, document_id: str, status: str, within: float) -> str:
    deadline = time.monotonic() + within
    current = ""
    while time.monotonic() < deadline:
        current = client.http.get(f"/api/documents/{document_id}").json().get("status", "")
        if current == status:
            break
        time.sleep(0.1)
    return current


def _wait_for_retry(db_url: str, document_id: str, since: float, within: float) -> float | None:
    """Seconds from ``since`` until the document's job was taken up again, or None."""
    deadline = time.monotonic() + within
    with psycopg.connect(db_url, autocommit=True) as conn:
        while time.monotonic() < deadline:
            row = conn.execute(
                "SELECT attempts FROM procrastinate_jobs WHERE args->>'document_id' = %s",
                (document_id,),
            ).fetchone()
            if row is not None and row[0] >= 1:
                return time.monotonic() - since
            time.sleep(0.1)
    return None


def test_a_worker_killed_mid_job_leaves_the_document_to_finish_elsewhere(
    db_url: str, tmp_path: Path
) -> None:
    alice = asyncio.run(new_user(db_url, "alice"))
    pdf = tmp_path / "survey.pdf"
    pdf.write_bytes(LONG_PDF)
    data_dir = tmp_path / "service"
    workers: list[subprocess.Popen[bytes]] = []
    try:
        with (
            run_service(db_url, data_dir, server={"run_worker": False}) as base_url,
            ShortlistClient(base_url, alice.token) as client,
        ):
            workers.append(_start_worker(db_url, data_dir, tmp_path / "worker1.log"))
            document = client.upload(str(alice.project.id), pdf)
            assert _wait_for_status(client, document["id"], "processing", 60) == "processing"

            os.killpg(workers[0].pid, signal.SIGKILL)
            workers[0].wait()
            killed_at = time.monotonic()
            workers.append(_start_worker(db_url, data_dir, tmp_path / "worker2.log"))
            resumed_after = _wait_for_retry(db_url, document["id"], killed_at, within=120)
            final = client.wait(document["id"], timeout=180, interval=0.5)

        assert final["status"] == "ready", final
        assert final["page_count"] == 12
        # Dead after DEAD_AFTER s without a heartbeat, found by the next sweep, fetched at the
        # next poll; the slack covers the second worker's start on a busy machine. (Before, a
        # fixed 30 s passed before a worker counted as dead.)
        assert resumed_after is not None
        assert resumed_after < DEAD_AFTER + sweep_interval(DEAD_AFTER) + 20, resumed_after
    finally:
        for worker in workers:
            if worker.poll() is None:
                os.killpg(worker.pid, signal.SIGKILL)
                worker.wait()


def test_deleting_a_document_while_its_job_runs_leaves_nothing_behind(
    db_url: str, tmp_path: Path
) -> None:
    alice = asyncio.run(new_user(db_url, "alice"))
    pdf = tmp_path / "survey.pdf"
    pdf.write_bytes(LONG_PDF)
    data_dir = tmp_path / "service"

    with (
        run_service(db_url, data_dir) as base_url,
        ShortlistClient(base_url, alice.token) as client,
    ):
        document = client.upload(str(alice.project.id), pdf)
        assert _wait_for_status(client, document["id"], "processing", 60) == "processing"
        deleted = client.http.delete(f"/api/documents/{document['id']}")
        deadline = time.monotonic() + 120
        with psycopg.connect(db_url) as conn:
            while time.monotonic() < deadline:
                row = conn.execute(
                    "SELECT status FROM procrastinate_jobs WHERE args->>'document_id' = %s",
                    (document["id"],),
                ).fetchone()
                if row and row[0] in ("succeeded", "failed"):
                    break
                time.sleep(0.3)
            job_status = row[0] if row else None
            remaining = conn.execute("SELECT count(*) FROM documents").fetchone()
        after = client.http.get(f"/api/documents/{document['id']}")

    assert deleted.status_code == 204
    assert job_status == "succeeded", "the job ends quietly when its document is gone"
    assert remaining == (0,)
    assert after.status_code == 404
    assert not [path for path in (data_dir / "blobs").rglob("*") if path.is_file()]
