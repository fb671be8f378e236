"""``shortlist ingest`` of the 1M-passage corpus into one growing project: files per second as
the project grows (#28).

Writes ``--documents`` four-page Markdown documents of SciFact abstracts (the layout of
``bench/prefilter.py``'s million-passage project, made by ``bench/latency.py``'s generator; the
default, 142,857, is that whole corpus) into a folder, runs one ``shortlist ingest`` of the
folder into a fresh database on the local PostgreSQL, and counts the project's stored
documents and passages every ``--every`` seconds; prints a table of the rate per interval and
the run's totals. ``--stop-after S`` ends the run early. From the repository root::

    .venv/bin/python bench/ingest_growth.py [--documents 142857] [--every 30] [--stop-after S]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
import uuid
from itertools import islice
from pathlib import Path

import psycopg

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))

from bench.latency import SCIFACT_DIR, documents, load_abstracts  # noqa: E402

SERVER = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def write_corpus(folder: Path, count: int) -> None:
    stream = documents(load_abstracts(SCIFACT_DIR), per_document=4, per_page=1)
    for n, document in enumerate(islice(stream, count)):
        (folder / f"abstracts-{n:06d}.md").write_text(document.markdown, encoding="utf-8")


def stored(url: str) -> tuple[int, int]:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*), coalesce(sum(passages), 0) FROM lexical_documents"
        ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--documents", type=int, default=142_857)
    parser.add_argument("--every", type=float, default=30.0)
    parser.add_argument("--stop-after", type=float, default=0.0, help="seconds (0: to the end)")
    args = parser.parse_args()
    name = f"bench_ingest_growth_{uuid.uuid4().hex[:8]}"
    url = f"{SERVER.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(SERVER, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch) / "corpus"
            folder.mkdir()
            write_corpus(folder, args.documents)
            environment = {**os.environ, "DATABASE_URL": url,
                           "SHORTLIST_DATA_DIR": str(Path(scratch) / "data")}  # fmt: skip
            cli = [sys.executable, "-m", "service.cli"]
            subprocess.run([*cli, "user", "create", "bench"], env=environment, check=True,
                           capture_output=True, cwd=REPO_DIR)  # fmt: skip
            print(f"command: python bench/ingest_growth.py {' '.join(sys.argv[1:])}")
            print(f"load average {os.getloadavg()[0]:.1f}, {args.documents} documents\n")
            print("| seconds | documents | passages | files/s in the interval |")
            print("|---:|---:|---:|---:|")
            started = time.monotonic()
            run = subprocess.Popen([*cli, "ingest", str(folder)], env=environment, cwd=REPO_DIR,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
            last = (0, 0)
            while run.poll() is None:
                time.sleep(args.every)
                now = stored(url)
                elapsed = time.monotonic() - started
                rate = (now[0] - last[0]) / args.every
                print(f"| {elapsed:.0f} | {now[0]} | {now[1]} | {rate:.0f} |", flush=True)
                last = now
                if args.stop_after and elapsed >= args.stop_after:
                    run.terminate()
                    run.wait()
            elapsed = time.monotonic() - started
            final = stored(url)
            children = resource.getrusage(resource.RUSAGE_CHILDREN)
            print(f"\n{final[0]} documents, {final[1]} passages in {elapsed:.0f} s: "
                  f"{final[0] / elapsed:.1f} files/s; exit {run.returncode}; the CLI's commands: "
                  f"CPU {children.ru_utime + children.ru_stime:.0f} s, the largest at most "
                  f"{children.ru_maxrss / 1024:.0f} MB resident")  # fmt: skip
    finally:
        with psycopg.connect(SERVER, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


if __name__ == "__main__":
    main()
