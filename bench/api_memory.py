"""What one API process holds while it serves a large project (#28): ``shortlist serve``'s
resident memory, searched over HTTP.

For a database ``bench/prefilter.py`` made (``shortlist_bench_prefilter_<size>_4``: run it with
``--bulk`` first), one ``shortlist serve --no-worker`` (the background warm-up on, as in
production; rate limits off) with ``--reranker`` (``local``, the default without a Cohere key,
or ``none``) answers ``--queries`` SciFact claims one after another through
``POST /api/projects/{id}/search``; then it is left alone for ``--settle`` seconds, in which the
warm-up embeds what the searches touched. The server's resident memory (``VmRSS``) and its
peak (``VmHWM``) are read from ``/proc`` after the searches and after the settling. From the
repository root::

    .venv/bin/python -m bench.api_memory --size 1000000 --queries 40 --settle 120
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import httpx

from bench.latency import SCIFACT_DIR, load_queries
from bench.prefilter import database_url, resident_mb
from tests.deploy.processes import (
    HOST,
    ProcessFleet,
    clean_environment,
    free_port,
    wait_until_healthy,
)


def memory_mb(pid: int) -> tuple[float, float]:
    """(resident, peak resident) MB of process ``pid``."""
    return resident_mb(pid), resident_mb(pid, "VmHWM")


def measure(size: int, reranker: str, query_count: int, settle: float) -> None:
    url = database_url(f"shortlist_bench_prefilter_{size}_4")
    claims = load_queries(SCIFACT_DIR, query_count + 1)[1:]
    with tempfile.TemporaryDirectory(prefix="shortlist-api-memory-") as tmp:
        env = clean_environment(
            {
                "DATABASE_URL": url,
                "SHORTLIST_DATA_DIR": str(Path(tmp) / "data"),
                "SHORTLIST_SEARCH__RERANKER": reranker,
                "SHORTLIST_SERVER__SEARCH_RATE_PER_MINUTE": "0",
                "SHORTLIST_SERVER__LOG_LEVEL": "warning",
            }
        )
        with ProcessFleet(Path(tmp)) as fleet:
            created = json.loads(
                fleet.run(["token", "create", "--user", "bench", "--scope", "read", "--json"], env)
            )
            port = free_port()
            base_url = f"http://{HOST}:{port}"
            server = fleet.start(
                "serve", ["serve", "--host", HOST, "--port", str(port), "--no-worker"], env
            )
            wait_until_healthy(server, base_url, within=120.0)
            pid = server.process.pid
            started = memory_mb(pid)
            headers = {"Authorization": f"Bearer {created['token']}"}
            walls: list[float] = []
            with httpx.Client(base_url=base_url, headers=headers, timeout=120.0) as client:
                project = client.get("/api/projects").raise_for_status().json()["projects"][0]["id"]
                for claim in claims:
                    began = time.perf_counter()
                    response = client.post(
                        f"/api/projects/{project}/search", json={"query": claim, "top_k": 10}
                    )
                    walls.append(time.perf_counter() - began)
                    response.raise_for_status()
            searched = memory_mb(pid)
            time.sleep(settle)
            settled = memory_mb(pid)
            server.stop()
    print(f"Command: `python -m bench.api_memory {' '.join(sys.argv[1:])}`")
    print(
        f"{size:,}-passage bench project, reranker {reranker}, {len(claims)} SciFact claims "
        f"over HTTP; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
    )
    print(
        "| started (MB) | after the searches (MB) | after settling (MB) | peak (MB) "
        "| search p50 / max (ms) |"
    )
    print("|---:|---:|---:|---:|---:|")
    print(
        f"| {started[0]:,.0f} | {searched[0]:,.0f} | {settled[0]:,.0f} "
        f"({settle:.0f} s) | {settled[1]:,.0f} "
        f"| {statistics.median(walls) * 1000:,.0f} / {max(walls) * 1000:,.0f} |"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=1_000_000, help="the database's --sizes value")
    parser.add_argument("--reranker", choices=("local", "none"), default="local")
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--settle", type=float, default=120.0, help="seconds left idle after")
    args = parser.parse_args(argv)
    measure(args.size, args.reranker, args.queries, args.settle)


if __name__ == "__main__":
    main()
