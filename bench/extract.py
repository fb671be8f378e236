"""Extraction throughput: pages per second, files per second and peak memory.

Three tables, each method in its own fresh process (so peak RSS and CPU time
are that method's alone; CPU counts the process and all its children):

``papers`` -- every PDF in ``CORPUS_DIR/papers`` and ``CORPUS_DIR/papers_acl``:

* ``plain``: PyMuPDF ``page.get_text()`` per page, the lower bound;
* ``pymupdf4llm``: ``pymupdf4llm.to_markdown(doc, page_chunks=True, use_ocr=False)``;
* ``extract_document``: Shortlist's full PDF path in this process.

``long`` -- the 400-page IRS manual and a long paper-like PDF (the ten
``papers/`` PDFs joined into one), or the corpus PDFs ``--long-docs`` names, side by side:

* ``one child``: :func:`extract.extract_in_sandbox`, one sandbox child with the
  layout time budget (the path every document took before parallel parts);
* ``parallel``: :class:`extract.SandboxPool` with its defaults (parts of 16
  pages; ``--workers`` part children at a time, by default one per two CPU cores,
  ``extract.pdf_ranges.default_workers``);
* ``pymupdf4llm``: pymupdf4llm's layout mode over the whole document in one process.

``ingest`` -- ``shortlist ingest`` (a real CLI run against a fresh database) of
400 one-paragraph Markdown files, of as many four-page Markdown documents of SciFact abstracts
(``--ingest-files N``; the layout of #28's million-passage project) and of 50 small PDFs
(``--ingest-kinds`` picks): files per second, wall clock including the command's start.

Usage::

    .venv/bin/python bench/extract.py [--suites papers long ingest] [--runs N] [--workers N]

Prints the command, the machine and Markdown tables. Wall time suffers on a
busy machine; CPU seconds are the steadier figure.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

REPO_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_DIR))

from tests.support.paths import CORPUS_DIR  # noqa: E402

METHODS = ("plain", "pymupdf4llm", "extract_document")
LONG_METHODS = ("one child", "parallel", "pymupdf4llm")
LONG_MANUAL = "long_100plus/pdf2image-memory-error-test-400p.pdf"
PAPER_LIKE = "papers/*.pdf, joined"
_PLAIN_PAGES = re.compile(r"page ([\d, -]+) extracted as plain text")


def _cpu_seconds() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _plain_pages(warnings: tuple[str, ...]) -> int:
    """How many pages the warnings say came out as plain text."""
    count = 0
    for warning in warnings:
        for found in _PLAIN_PAGES.finditer(warning):
            for piece in found.group(1).split(","):
                first, _, last = piece.strip().partition("-")
                count += int(last or first) - int(first) + 1
    return count


def _long_document(name: str, pages: int) -> bytes:
    """The long PDF ``name``, cut to its first ``pages`` pages when ``pages`` > 0."""
    import pymupdf

    joined = pymupdf.open()
    sources = (sorted((CORPUS_DIR / "papers").glob("*.pdf")) if name == PAPER_LIKE
               else [CORPUS_DIR / name])  # fmt: skip
    for path in sources:
        with pymupdf.open(path) as source:
            joined.insert_pdf(source)
    if 0 < pages < joined.page_count:
        joined.select(range(pages))
    data: bytes = joined.tobytes(garbage=3)
    joined.close()
    return data


def _run_long(
    method: str, name: str, pages_wanted: str, ocr_engine: str, workers: str
) -> dict[str, Any]:
    """Worker side: extract one long PDF with ``method`` (Shortlist's OCR engine
    ``ocr_engine``; ``workers`` part children for ``parallel``, ``0`` for the default)."""
    import pymupdf

    data = _long_document(name, int(pages_wanted))
    wall = time.perf_counter()
    cpu = _cpu_seconds()
    plain = 0
    if method == "pymupdf4llm":
        import pymupdf4llm

        with pymupdf.open(stream=data, filetype="pdf") as document:
            pages = len(
                pymupdf4llm.to_markdown(
                    document, page_chunks=True, use_ocr=False, show_progress=False
                )
            )
    else:
        from extract import ExtractionLimits, OcrOptions, SandboxPool, extract_in_sandbox

        limits = ExtractionLimits(ocr=OcrOptions(engine="off" if ocr_engine == "off" else "auto"))
        if method == "one child":
            extraction = extract_in_sandbox(data, "long.pdf", None, limits=limits)
        else:
            with SandboxPool(spares=0, workers=int(workers) or None) as pool:
                extraction = pool.extract(data, "long.pdf", None, limits=limits)
        pages, plain = extraction.page_count, _plain_pages(extraction.warnings)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return {
        "document": name,
        "method": method,
        "pages": pages,
        "plain_pages": plain,
        "wall_seconds": time.perf_counter() - wall,
        "cpu_seconds": _cpu_seconds() - cpu,
        "peak_rss_mb": max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, children),
    }


def _long_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| document | method | pages | plain-text pages | wall s | CPU s | pages/s (wall) "
        "| pages/CPU-s | peak RSS MB (one process) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['document']} | {row['method']} | {row['pages']} | {row['plain_pages']} "
            f"| {row['wall_seconds']:.1f} | {row['cpu_seconds']:.1f} "
            f"| {row['pages'] / row['wall_seconds']:.2f} | {row['pages'] / row['cpu_seconds']:.2f} "
            f"| {row['peak_rss_mb']:.0f} |"
        )
    return "\n".join(lines)


def _ingest_files(folder: Path, kind: str, markdown_files: int = 400) -> list[Path]:
    import pymupdf

    paths: list[Path] = []
    if kind == "scifact":
        return _scifact_files(folder, markdown_files)
    if kind == "markdown":
        for n in range(markdown_files):
            path = folder / f"note-{n:05d}.md"
            path.write_text(
                f"# Field note {n}\n\nTidal flat survey {n}: {n % 17} oystercatchers, "
                f"{n % 5} curlews and a spoonbill near marker {n * 7}.\n",
                encoding="utf-8",
            )
            paths.append(path)
        return paths
    for n in range(50):
        document = pymupdf.open()
        for page_number in range(2):
            page = document.new_page()
            page.insert_textbox(
                pymupdf.Rect(72, 72, 540, 770),
                f"Report {n}, page {page_number + 1}: sediment cores from station {n * 3}.",
                fontsize=11,
            )
        path = folder / f"report-{n:02d}.pdf"
        document.save(path)
        document.close()
        paths.append(path)
    return paths


def _scifact_files(folder: Path, count: int) -> list[Path]:
    """SciFact abstracts, four to a four-page Markdown document, with varied wording once the
    corpus is used up: the layout of #28's million-passage project (``bench/prefilter.py``)."""
    from itertools import islice

    from bench.latency import SCIFACT_DIR, documents, load_abstracts

    paths: list[Path] = []
    stream = documents(load_abstracts(SCIFACT_DIR), per_document=4, per_page=1)
    for n, document in enumerate(islice(stream, count)):
        path = folder / f"abstracts-{n:06d}.md"
        path.write_text(document.markdown, encoding="utf-8")
        paths.append(path)
    return paths


def _measure_ingest(
    kind: str, markdown_files: int = 400, database: str | None = None
) -> dict[str, Any]:
    """``shortlist ingest`` of generated files into a fresh database (or into ``database``'s
    only user's only project, whose new documents are deleted afterwards), timed from outside."""
    import psycopg

    server = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"bench_ingest_{uuid.uuid4().hex[:8]}"
    url = database or f"{server.rsplit('/', 1)[0]}/{name}"
    if database is None:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
    names: list[str] = []
    try:
        with tempfile.TemporaryDirectory() as scratch:
            folder = Path(scratch)
            paths = _ingest_files(folder, kind, markdown_files)
            names = [path.name for path in paths]
            environment = {
                **os.environ,
                "DATABASE_URL": url,
                "SHORTLIST_DATA_DIR": str(folder / "data"),
            }
            cli = [sys.executable, "-m", "service.cli"]
            if database is None:
                subprocess.run([*cli, "user", "create", "bench"], env=environment, check=True,
                               capture_output=True)  # fmt: skip
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall = time.perf_counter()
            subprocess.run([*cli, "ingest", *map(str, paths)], env=environment, check=True,
                           capture_output=True)  # fmt: skip
            wall = time.perf_counter() - wall
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        if database is None:
            with psycopg.connect(server, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        else:
            with psycopg.connect(database, autocommit=True) as conn:
                conn.execute("DELETE FROM documents WHERE name = ANY(%s)", (names,))
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return {"files": len(paths), "kind": kind, "wall_seconds": wall, "cpu_seconds": cpu}


def _ingest_table(rows: list[dict[str, Any]]) -> str:
    lines = [
        "| files | count | wall s | CPU s | files/s (wall) | files/CPU-s |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for row in rows:
        lines.append(
            f"| {row['kind']} | {row['files']} | {row['wall_seconds']:.1f} "
            f"| {row['cpu_seconds']:.1f} | {row['files'] / row['wall_seconds']:.1f} "
            f"| {row['files'] / row['cpu_seconds']:.1f} |"
        )
    return "\n".join(lines)


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
    return _in_fresh_process(["--worker", method, *map(str, paths)])


def _in_fresh_process(arguments: list[str]) -> dict[str, Any]:
    command = [sys.executable, __file__, *arguments]
    environment = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    done = subprocess.run(command, capture_output=True, check=True, env=environment)
    result: dict[str, Any] = json.loads(done.stdout.decode().strip().splitlines()[-1])
    return result


def _median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    middle = statistics.median(run["wall_seconds"] for run in runs)
    return min(runs, key=lambda run: abs(run["wall_seconds"] - middle))


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
    parser.add_argument("--suites", nargs="+", default=["papers", "long", "ingest"],
                        choices=["papers", "long", "ingest"])  # fmt: skip
    parser.add_argument("--dirs", nargs="+", default=["papers", "papers_acl"])
    parser.add_argument("--runs", type=int, default=1, help="runs per method; the median is shown")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--long-methods", nargs="+", default=list(LONG_METHODS),
                        choices=LONG_METHODS)  # fmt: skip
    parser.add_argument("--worker", choices=METHODS, help=argparse.SUPPRESS)
    parser.add_argument("--pages", type=int, default=0,
                        help="long suite: only the first N pages of each document (0: all)")  # fmt: skip
    parser.add_argument("--long-docs", nargs="+", default=[LONG_MANUAL, PAPER_LIKE],
                        help="long suite: corpus paths, or the joined papers "
                        f"({PAPER_LIKE!r})")  # fmt: skip
    parser.add_argument("--ocr", choices=["off", "auto"], default="off",
                        help="long suite: Shortlist's OCR engine (off compares layout work with "
                             "pymupdf4llm, which recognises nothing)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=0,
                        help="long suite: part children of the parallel method (default: one "
                             "per two CPU cores, as SandboxPool)")  # fmt: skip
    parser.add_argument("--ingest-files", type=int, default=400,
                        help="ingest suite: how many Markdown files (the CLI's start counts "
                             "less the more there are)")  # fmt: skip
    parser.add_argument("--ingest-kinds", nargs="+", default=["markdown", "scifact", "pdf"],
                        choices=["markdown", "scifact", "pdf"],
                        help="ingest suite: one-paragraph notes, four-page SciFact documents "
                             "(both --ingest-files of them), 50 two-page PDFs")  # fmt: skip
    parser.add_argument("--ingest-database", metavar="URL",
                        help="ingest suite: into this database's only project (e.g. a "
                             "bench/prefilter.py one of 1M passages), not a fresh database; "
                             "what was ingested is deleted afterwards")  # fmt: skip
    parser.add_argument("--long-worker", nargs=5, help=argparse.SUPPRESS)
    parser.add_argument("files", nargs="*", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.worker:
        print(json.dumps(_run_method(arguments.worker, [Path(f) for f in arguments.files])))
        return
    if arguments.long_worker:
        print(json.dumps(_run_long(*arguments.long_worker)))
        return

    paths = sorted(
        path for folder in arguments.dirs for path in (CORPUS_DIR / folder).glob("*.pdf")
    )
    print("command: " + shlex.join(["python", "bench/extract.py", *sys.argv[1:]]))
    print(
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}; "
        f"papers corpus: {', '.join(arguments.dirs)} ({len(paths)} PDFs); runs: {arguments.runs}\n"
    )
    if "papers" in arguments.suites:
        rows = []
        for method in arguments.methods:
            rows.append(_median_run([_measure(method, paths) for _ in range(arguments.runs)]))
        print(_table(rows) + "\n")
    if "long" in arguments.suites:
        long_options = [str(arguments.pages), arguments.ocr, str(arguments.workers)]
        rows = []
        for name in arguments.long_docs:
            for method in arguments.long_methods:
                runs = [
                    _in_fresh_process(["--long-worker", method, name, *long_options])
                    for _ in range(arguments.runs)
                ]
                rows.append(_median_run(runs))
                print(f"  done: {name}, {method} (load {os.getloadavg()[0]:.1f})", file=sys.stderr)
        print(_long_table(rows) + "\n")
    if "ingest" in arguments.suites:
        rows = [_median_run([_measure_ingest(kind, arguments.ingest_files,
                                             arguments.ingest_database)
                             for _ in range(arguments.runs)])
                for kind in arguments.ingest_kinds]  # fmt: skip
        print(_ingest_table(rows))
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
