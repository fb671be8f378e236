"""Time to extract one small document in the sandbox: a fresh child versus a waiting spare.

Run from the repository root::

    .venv/bin/python -m bench.sandbox_start [--runs 5]

Three small documents (a short PDF, a DOCX, a Markdown file), each extracted
``--runs`` times three ways:

* ``fresh``: :func:`extract.extract_in_sandbox`, a new child per document (what
  ``shortlist extract`` does, and the service with ``extraction.warm_processes = 0``);
* ``spare``: :class:`extract.SandboxPool` with one spare, given time to load
  before each document (a worker between uploads); spares serve PDFs only;
* ``back to back``: the same pool with no pause, so a PDF may find its spare
  still loading (a burst of uploads).

Latency is wall time from handing over the document to the answer (median). CPU
is not saved, only moved: a spare loads the same libraries a fresh PDF child
would, before its document arrives.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from extract import Extraction, SandboxPool, extract_in_sandbox

REPO_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_DIR))

from tests.unit.extract import samples  # noqa: E402

Extractor = Callable[[bytes, str, str | None], Extraction]


def documents() -> list[tuple[str, bytes]]:
    return [
        ("report.pdf", samples.pdf_report()),
        ("report.docx", samples.docx_report()),
        ("notes.md", b"# Notes\n\nA short Markdown file.\n"),
    ]


def measure(
    extract: Extractor, name: str, data: bytes, runs: int, before_each: Callable[[], None]
) -> list[float]:
    """Latencies (s) of extracting one document ``runs`` times."""
    latencies: list[float] = []
    for _ in range(runs):
        before_each()
        started = time.perf_counter()
        extract(data, name, None)
        latencies.append(time.perf_counter() - started)
    return latencies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=8, help="extractions of each document")
    parser.add_argument("--load-seconds", type=float, default=4.0, help="pause before each")
    args = parser.parse_args()

    rows: list[tuple[str, str, list[float]]] = []
    pool = SandboxPool(spares=1)

    def wait_for_spare() -> None:
        pool.warm()
        time.sleep(args.load_seconds)  # a worker idle between uploads: the spare is loaded

    try:
        for name, data in documents():
            for label, extract, before_each in (
                ("fresh child", extract_in_sandbox, lambda: None),
                ("waiting spare", pool.extract, wait_for_spare),
                ("back to back", pool.extract, lambda: None),
            ):
                rows.append((name, label, measure(extract, name, data, args.runs, before_each)))
    finally:
        pool.close()

    command = " ".join([".venv/bin/python -m bench.sandbox_start", *sys.argv[1:]])
    print(f"Command: `{command}`")
    print(
        f"Machine: {platform.machine()}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs; {args.runs} extractions of each document per row\n"
    )
    print("| document | child | median latency (ms) | p90 latency (ms) |")
    print("| --- | --- | ---: | ---: |")
    for name, label, latencies in rows:
        median = statistics.median(latencies) * 1000
        p90 = statistics.quantiles(latencies, n=10)[-1] * 1000
        print(f"| {name} | {label} | {median:,.0f} | {p90:,.0f} |")


if __name__ == "__main__":
    main()
