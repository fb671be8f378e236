"""What the queries a search runs before ranking cost, now and at an earlier commit (#28).

On a database ``bench/prefilter.py`` made (one project), each query is run ``--runs`` times on
one connection, the two versions alternating, and timed by the client (wall) and by the
backend's CPU (``/proc``, 10 ms ticks, so only as a mean over the runs). The earlier version of
a query is read from ``git show REV:sql/queries.sql``; a query that did not exist then is
measured only now. From the repository root::

    .venv/bin/python -m bench.prefilter_queries --database shortlist_bench_prefilter_350_4
    .venv/bin/python -m bench.prefilter_queries --database shortlist_bench_prefilter_100000_4
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from bench.prefilter import TICKS, _ticks, database_url
from retrieval import ChunkIndex
from sql import parse_queries, queries

#: The queries a search of a whole project runs to decide and list what it ranks.
MEASURED = ("lexical_stats", "list_ready_document_refs", "list_ready_document_refs_with_terms")


def _params(conn: psycopg.Connection[Any], config: str) -> dict[str, Any]:
    row = conn.execute("SELECT id, user_id FROM projects ORDER BY created_at LIMIT 1").fetchone()
    assert row is not None, "no project: make one with bench/prefilter.py"
    return {
        "project_id": row["id"],
        "user_id": row["user_id"],
        "config": config,
        "document_ids": None,
    }


def _time(
    conn: psycopg.Connection[Any], sql: str, params: dict[str, Any], pid: int, runs: int
) -> tuple[float, float, float, int]:
    """(wall ms, client CPU ms, backend CPU ms, rows) per run."""
    conn.execute(sql, params).fetchall()  # warm the plan cache and the buffers
    ticks, wall, cpu = _ticks(pid), time.perf_counter(), time.process_time()
    for _ in range(runs):
        rows = len(conn.execute(sql, params).fetchall())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    backend = (_ticks(pid) - ticks) / TICKS
    return wall / runs * 1000, cpu / runs * 1000, backend / runs * 1000, rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--database", required=True)
    parser.add_argument("--before", default="main", help="the commit to compare with")
    parser.add_argument("--runs", type=int, default=100)
    args = parser.parse_args(argv)
    earlier = parse_queries(
        subprocess.run(
            ["git", "show", f"{args.before}:sql/queries.sql"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
    )
    config = ChunkIndex(chunk_size=1200).terms_config
    lines = []
    with psycopg.connect(
        database_url(args.database), autocommit=True, row_factory=dict_row
    ) as conn:
        params = _params(conn, config)
        pid = conn.execute("SELECT pg_backend_pid() AS pid").fetchone()["pid"]  # type: ignore[index]
        documents = conn.execute("SELECT count(*) AS n FROM documents").fetchone()["n"]  # type: ignore[index]
        for name in MEASURED:
            versions = [("now", queries[name])]
            if name in earlier and earlier[name] != queries[name]:
                versions.insert(0, (args.before, earlier[name]))
            for label, sql in versions:
                wall, cpu, backend, rows = _time(conn, sql, params, pid, args.runs)
                lines.append(
                    f"| `{name}` | {label} | {rows:,} | {wall:.2f} | {cpu:.2f} | {backend:.2f} |"
                )
    print(f"Command: `python -m bench.prefilter_queries {' '.join(sys.argv[1:])}`")
    print(
        f"{args.database}: {documents:,} documents; {args.runs} runs each; load average "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
    )
    print(
        "| query | version | rows | wall per run (ms) | client CPU per run (ms) "
        "| database CPU per run (ms) |"
    )
    print("|---|---|---:|---:|---:|---:|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
