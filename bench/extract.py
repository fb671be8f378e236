"""Extraction throughput: pages per second and peak memory over the corpus papers.

Each method runs in its own fresh process (so peak RSS is that method's alone)
over every PDF in ``CORPUS_DIR/papers`` and ``CORPUS_DIR/papers_acl``:

* ``plain``: PyMuPDF ``page.get_text()`` per page, the lower bound;
* ``pymupdf4llm``: ``pymupdf4llm.to_markdown(doc, page_chunks=True, use_ocr=False)``;
* ``extract_document``: Shortlist's full PDF path (plain pass for scan
  detection, then pymupdf4llm per page within the default layout budget).

Usage::

    .venv/bin/python bench/extract.py [--runs N] [--dirs papers papers_acl]

Prints the command, the machine and a Markdown table. Wall time suffers on a
busy machine; CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_DIR))

from tests.support.paths import CORPUS_DIR  # noqa: E402

METHODS = ("plain", "pymupdf4llm", "extract_document")


def _run_method(method: str, paths: list[Path]) -> dict[str, Any]:
    """Worker side: extract every file with ``method``; report pages, times and peak RSS."""
    import pymupdf

    pages = 0
    wall = time.perf_counter()
    cpu = time.process_time()
    for path in paths:
        if method == "plain":
            with pymupdf.open(path) as document:
                pages += sum(1 for page in document if page.get_text() is not None)
        elif method == "pymupdf4llm":
            import pymupdf4llm

            with pymupdf.open(path) as document:
                chunks = pymupdf4llm.to_markdown(
                    document, page_chunks=True, use_ocr=False, show_progress=False
                )
                pages += len(chunks)
        else:
            from extract import extract_document

            pages += extract_document(path.read_bytes(), path.name, "application/pdf").page_count
    return {
        "method": method,
        "files": len(paths),
        "pages": pages,
        "wall_seconds": time.perf_counter() - wall,
        "cpu_seconds": time.process_time() - cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _measure(method: str, paths: list[Path]) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", method, *map(str, paths)]
    environment = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    done = subprocess.run(command, capture_output=True, check=True, env=environment)
    result: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return result


def _table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| method | files | pages | wall s | CPU s | pages/s (wall) | pages/CPU-s | peak RSS MB |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['method']} | {row['files']} | {row['pages']} | {row['wall_seconds']:.1f} "
            f"| {row['cpu_seconds']:.1f} | {row['pages'] / row['wall_seconds']:.1f} "
            f"| {row['pages'] / row['cpu_seconds']:.1f} | {row['peak_rss_mb']:.0f} |"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dirs", nargs="+", default=["papers", "papers_acl"])
    parser.add_argument("--runs", type=int, default=1, help="runs per method; the median is shown")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--worker", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        print(json.dumps(_run_method(arguments.worker, [Path(f) for f in arguments.files])))
        return

    paths = sorted(
        path for folder in arguments.dirs for path in (CORPUS_DIR / folder).glob("*.pdf")
    )
    print("command: " + shlex.join(["python", "bench/extract.py", *sys.argv[1:]]))
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}; "
        f"corpus: {', '.join(arguments.dirs)} ({len(paths)} PDFs); runs: {arguments.runs}\n"
    )
    rows = []
    for method in arguments.methods:
        runs = [_measure(method, paths) for _ in range(arguments.runs)]
        rows.append(min(runs, key=lambda run: abs(run["wall_seconds"] - statistics.median(
            r["wall_seconds"] for r in runs))))  # fmt: skip
    print(_table(rows))


if __name__ == "__main__":
    main()
