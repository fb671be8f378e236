"""Capacity of one API replica and one extraction worker, measured on this machine.

Run from the repository root against a real PostgreSQL (a scratch database is
created on that server and dropped afterwards)::

    DATABASE_URL=postgresql://postgres@127.0.0.1:5432/test \\
        .venv/bin/python -m bench.capacity --documents 100 --seconds 30 --clients 4

What it does, with the real ``shortlist`` command in subprocesses:

1. ``shortlist user create`` and ``shortlist ingest`` of ``--documents``
   Markdown documents built from SciFact abstracts (``SCIFACT_DIR/corpus.jsonl``,
   20 abstracts per document);
2. ``shortlist ingest`` of ``--pdfs`` corpus PDFs (``CORPUS_DIR/papers``): the
   same sandboxed extraction a worker runs per job, one at a time, so pages/s
   is one worker slot's throughput; then the stored Markdown's size in
   PostgreSQL per page (``pg_column_size``, i.e. after TOAST compression);
3. for each ``--rerankers`` value, one ``shortlist serve --no-worker`` with
   rate limits off; after a warm-up (first queries fill the chunk cache),
   ``--clients`` threads send SciFact claims to ``POST /api/projects/{id}/search``
   over loopback for ``--seconds``; QPS, p50, p95, errors, answers left in BM25
   order because the reranker hit its timeout, and the API process's CPU time per
   query (steadier than wall time on a shared machine) are reported.

The load generator runs on the same cores as the server, so the figures are a
floor for a dedicated machine. Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import sys
import tempfile
import threading
import time
import uuid
from itertools import islice
from pathlib import Path
from typing import NamedTuple

import httpx
import psycopg
from psycopg import sql as pgsql
from psycopg.conninfo import make_conninfo

REPO_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_DIR))

from tests.deploy.processes import (  # noqa: E402
    HOST,
    ProcessFleet,
    clean_environment,
    free_port,
    wait_until_healthy,
)
from tests.support.paths import CORPUS_DIR, SCIFACT_DIR  # noqa: E402

ABSTRACTS_PER_DOCUMENT = 20


class LoadResult(NamedTuple):
    reranker: str
    requests: int
    errors: int
    seconds: float
    latencies: list[float]
    not_reranked: int
    """Answers in BM25 order because the reranker did not finish within its timeout."""
    server_cpu_seconds: float
    """CPU time the API process used during the load: steadier than wall time on a busy machine."""

    @property
    def qps(self) -> float:
        return self.requests / self.seconds

    def percentile(self, fraction: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


class PdfResult(NamedTuple):
    files: int
    pages: int
    seconds: float
    cpu_seconds: float
    markdown_bytes: int
    stored_bytes: int


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU time of a running process (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def scratch_database(server_url: str) -> tuple[str, str]:
    """(name, URL) of a new empty database on the server ``server_url`` points at."""
    name = f"shortlist_capacity_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
    return name, make_conninfo(server_url, dbname=name)


def drop_database(server_url: str, name: str) -> None:
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(
            pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name))
        )


def write_markdown_documents(directory: Path, count: int) -> list[Path]:
    """``count`` Markdown files of 20 SciFact abstracts each (a heading per abstract)."""
    directory.mkdir(parents=True, exist_ok=True)
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        abstracts = [json.loads(line) for line in lines]
    paths: list[Path] = []
    for number in range(count):
        start = (number * ABSTRACTS_PER_DOCUMENT) % len(abstracts)
        chosen = [abstracts[(start + i) % len(abstracts)] for i in range(ABSTRACTS_PER_DOCUMENT)]
        body = "\n\n".join(f"## {row['title']}\n\n{row['text']}" for row in chosen)
        path = directory / f"scifact-{number:04d}.md"
        path.write_text(f"# SciFact abstracts, part {number + 1}\n\n{body}\n", encoding="utf-8")
        paths.append(path)
    return paths


def load_queries(count: int) -> list[str]:
    with (SCIFACT_DIR / "queries.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line)["text"] for line in islice(lines, count)]


def ingest(fleet: ProcessFleet, env: dict[str, str], paths: list[Path]) -> tuple[float, float]:
    """(wall, CPU) seconds ``shortlist ingest`` takes for ``paths`` (one process, files one
    by one, each extracted in its sandbox child), less the cost of starting the command."""
    baseline_wall, baseline_cpu = _timed(fleet, env, ["user", "list", "--json"])
    wall, cpu = _timed(fleet, env, ["ingest", "--user", "bench", "--json", *map(str, paths)])
    return max(wall - baseline_wall, 1e-9), max(cpu - baseline_cpu, 1e-9)


def _timed(fleet: ProcessFleet, env: dict[str, str], args: list[str]) -> tuple[float, float]:
    cpu = children_cpu_seconds()
    started = time.perf_counter()
    fleet.run(args, env, timeout=3600)
    return time.perf_counter() - started, children_cpu_seconds() - cpu


def stored_pdf_sizes(db_url: str) -> tuple[int, int, int]:
    """(pages, Markdown bytes, bytes PostgreSQL stores for it) over the ready PDFs."""
    with psycopg.connect(db_url) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(page_count), 0), coalesce(sum(octet_length(markdown)), 0),"
            " coalesce(sum(pg_column_size(markdown)), 0)"
            " FROM documents WHERE kind = 'pdf' AND status = 'ready'"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), int(row[2])


def run_load(
    base_url: str, token: str, project_id: str, queries: list[str], clients: int, seconds: float
) -> tuple[int, int, int, list[float]]:
    """(requests, errors, not reranked, latencies) of ``clients`` threads searching for
    ``seconds``."""
    deadline = time.monotonic() + seconds
    lock = threading.Lock()
    latencies: list[float] = []
    errors = 0
    not_reranked = 0

    def client_loop(offset: int) -> None:
        nonlocal errors, not_reranked
        headers = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=base_url, headers=headers, timeout=60.0) as client:
            index = offset
            while time.monotonic() < deadline:
                query = queries[index % len(queries)]
                index += clients
                started = time.perf_counter()
                response = client.post(f"/api/projects/{project_id}/search", json={"query": query})
                elapsed = time.perf_counter() - started
                with lock:
                    latencies.append(elapsed)
                    if response.status_code != 200:
                        errors += 1
                    elif not response.json()["reranked"]:
                        not_reranked += 1

    threads = [threading.Thread(target=client_loop, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return len(latencies), errors, not_reranked, latencies


def measure_reranker(
    fleet: ProcessFleet,
    env: dict[str, str],
    reranker: str,
    token: str,
    project_id: str,
    queries: list[str],
    options: argparse.Namespace,
) -> LoadResult:
    port = free_port()
    server_env = {**env, "SHORTLIST_SEARCH__RERANKER": reranker}
    server = fleet.start(
        f"serve-{reranker}",
        ["serve", "--host", HOST, "--port", str(port), "--no-worker"],
        server_env,
    )
    base_url = f"http://{HOST}:{port}"
    try:
        wait_until_healthy(server, base_url, within=120.0)
        run_load(base_url, token, project_id, queries, options.clients, options.warmup)
        cpu = process_cpu_seconds(server.process.pid)
        started = time.perf_counter()
        requests, errors, not_reranked, latencies = run_load(
            base_url, token, project_id, queries, options.clients, options.seconds
        )
        elapsed = time.perf_counter() - started
        cpu = process_cpu_seconds(server.process.pid) - cpu
    finally:
        server.stop()
    return LoadResult(reranker, requests, errors, elapsed, latencies, not_reranked, cpu)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Capacity of one API replica and one worker.")
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL"))
    parser.add_argument("--documents", type=int, default=100, help="Markdown documents to ingest.")
    parser.add_argument("--pdfs", type=int, default=4, help="Corpus PDFs to extract.")
    parser.add_argument("--seconds", type=float, default=30.0, help="Load duration per reranker.")
    parser.add_argument("--warmup", type=float, default=5.0, help="Warm-up before each load.")
    parser.add_argument("--clients", type=int, default=4, help="Concurrent clients.")
    parser.add_argument("--queries", type=int, default=300, help="SciFact claims to cycle through.")
    parser.add_argument("--rerankers", nargs="+", default=["none", "local"])
    options = parser.parse_args(argv)
    if not options.database_url:
        parser.error("set DATABASE_URL (or --database-url) to a PostgreSQL server")
    return options


def main(argv: list[str] | None = None) -> int:
    options = parse_args(argv)
    name, db_url = scratch_database(options.database_url)
    try:
        with tempfile.TemporaryDirectory(prefix="shortlist-capacity-") as tmp:
            workdir = Path(tmp)
            env = clean_environment(
                {
                    "DATABASE_URL": db_url,
                    "SHORTLIST_DATA_DIR": str(workdir / "data"),
                    "SHORTLIST_SERVER__SEARCH_RATE_PER_MINUTE": "0",
                    "SHORTLIST_SERVER__UPLOAD_RATE_PER_MINUTE": "0",
                    "SHORTLIST_SERVER__LOG_LEVEL": "warning",
                }
            )
            with ProcessFleet(workdir) as fleet:
                created = json.loads(fleet.run(["user", "create", "bench", "--json"], env))
                token, project_id = created["token"], created["project"]["id"]
                markdown = write_markdown_documents(workdir / "docs", options.documents)
                ingest_seconds, _ = ingest(fleet, env, markdown)
                pdf_paths = sorted((CORPUS_DIR / "papers").glob("*.pdf"))[: options.pdfs]
                pdf_seconds, pdf_cpu = ingest(fleet, env, pdf_paths)
                pages, markdown_bytes, stored_bytes = stored_pdf_sizes(db_url)
                pdfs = PdfResult(
                    len(pdf_paths), pages, pdf_seconds, pdf_cpu, markdown_bytes, stored_bytes
                )
                queries = load_queries(options.queries)
                loads = [
                    measure_reranker(fleet, env, reranker, token, project_id, queries, options)
                    for reranker in options.rerankers
                ]
    finally:
        drop_database(options.database_url, name)
    print_report(options, ingest_seconds, pdfs, loads)
    return 0


def print_report(
    options: argparse.Namespace, ingest_seconds: float, pdfs: PdfResult, loads: list[LoadResult]
) -> None:
    command = " ".join(["python -m bench.capacity", *map(shlex.quote, sys.argv[1:])])
    load1, load5, _ = os.getloadavg()
    print(f"Command: `{command}`  ")
    print(
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average at the end {load1:.1f} (1 min) / {load5:.1f} (5 min)  "
    )
    abstracts = options.documents * ABSTRACTS_PER_DOCUMENT
    print(
        f"Corpus: {options.documents} Markdown documents ({abstracts} SciFact abstracts), "
        f"ingested in {ingest_seconds:.1f} s ({options.documents / ingest_seconds:.1f} documents/s)\n"
    )
    print(f"Search, one API replica, {options.clients} clients, {options.seconds:.0f} s each:\n")
    print(
        "| Reranker | Requests | Errors | Not reranked | QPS | p50 ms | p95 ms "
        "| API CPU ms/query | Queries/s per core |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for load in loads:
        cpu_per_query = load.server_cpu_seconds / max(load.requests, 1)
        print(
            f"| {load.reranker} | {load.requests} | {load.errors} "
            f"| {'–' if load.reranker == 'none' else load.not_reranked} | {load.qps:.1f} "
            f"| {load.percentile(0.50):.0f} | {load.percentile(0.95):.0f} "
            f"| {cpu_per_query * 1000:.0f} | {1 / max(cpu_per_query, 1e-9):.1f} |"
        )
    print("\nExtraction, one worker slot (`shortlist ingest`, files one at a time):\n")
    print(
        "| PDFs | Pages | Seconds | Pages/s | CPU s/page | Pages/s per core "
        "| Markdown bytes/page | Stored bytes/page |"
    )
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    per_page = max(pdfs.pages, 1)
    print(
        f"| {pdfs.files} | {pdfs.pages} | {pdfs.seconds:.1f} | {pdfs.pages / pdfs.seconds:.2f} "
        f"| {pdfs.cpu_seconds / per_page:.2f} | {per_page / pdfs.cpu_seconds:.2f} "
        f"| {pdfs.markdown_bytes / per_page:.0f} | {pdfs.stored_bytes / per_page:.0f} |"
    )


if __name__ == "__main__":
    sys.exit(main())
