"""OCR quality and cost: word recall, character error rate, seconds per page, peak memory.

Ground truth, for each available engine (RapidOCR; Tesseract when installed):

* ``linn``: ``scanned_image_only/linn.pdf``, a real two-column brochure scan,
  against ``linn.txt``;
* ``print``: pages of text PDFs from the corpus (clean print) rasterised to an
  image-only PDF at 150 and at 300 dpi, against their own text layer.

Each engine runs in a fresh process with one inference thread (as in the
extraction sandbox), so its peak RSS is its own; pages go through
``extract_document`` exactly as an upload would, rendered at the scan's DPI.
Recall counts words with multiplicity, case and punctuation ignored; CER is
edits per character over the word sequence, so reading order counts
(``tests/support/ocr_truth.py``). CPU seconds are the steadier figure on a busy
machine.

Usage::

    .venv/bin/python bench/ocr.py [--engines rapidocr tesseract] [--pages N]
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

from tests.support.ocr_truth import (  # noqa: E402
    character_error_rate,
    image_only_pdf,
    page_text,
    word_recall,
)
from tests.support.paths import CORPUS_DIR  # noqa: E402

PRINT_PAGES = (
    ("papers/naacl06-shinyama.pdf", 0),
    ("papers/tracemonkey.pdf", 1),
    ("papers_acl/P19-1164.pdf", 2),
    ("papers/fr_olap.pdf", 0),
    ("papers_acl/W18-5713.pdf", 1),
    ("papers/multi-column.pdf", 0),
)
"""Text pages used as clean print: the first ``--pages`` of these."""
DPIS = (150, 300)


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (Tesseract runs as a program)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _measure(engine: str, data: bytes, truth: str, dpi: int) -> dict[str, float]:
    from extract import ExtractionLimits, OcrOptions, extract_document

    limits = ExtractionLimits(timeout_seconds=3600, ocr=OcrOptions(engine=engine, dpi=dpi))  # type: ignore[arg-type]
    wall, cpu = time.monotonic(), _cpu_seconds()
    extraction = extract_document(data, "scan.pdf", None, limits=limits)
    return {
        "recall": word_recall(truth, extraction.markdown),
        "cer": character_error_rate(truth, extraction.markdown),
        "cpu": _cpu_seconds() - cpu,
        "wall": time.monotonic() - wall,
        "pages": float(len(extraction.ocr_pages)),
    }


def run_engine(engine: str, pages: int) -> list[dict[str, Any]]:
    """Every row for one engine (called in its own process by ``main``)."""
    from extract.ocr import select_engine
    from extract.types import OcrOptions

    select_engine(OcrOptions(engine=engine))  # type: ignore[arg-type]  # load outside the timing
    rows: list[dict[str, Any]] = []
    linn = CORPUS_DIR / "scanned_image_only" / "linn.pdf"
    result = _measure(engine, linn.read_bytes(), (linn.parent / "linn.txt").read_text(), 200)
    rows.append({"set": "linn.pdf (scan)", "dpi": "scan @ 200", **result})
    for dpi in DPIS:
        measured = []
        for relative, index in PRINT_PAGES[:pages]:
            path = str(CORPUS_DIR / relative)
            measured.append(
                _measure(engine, image_only_pdf(path, [index], dpi), page_text(path, index), dpi)
            )
        rows.append(
            {
                "set": f"print, {len(measured)} pages",
                "dpi": str(dpi),
                "recall": statistics.mean(m["recall"] for m in measured),
                "min_recall": min(m["recall"] for m in measured),
                "cer": statistics.mean(m["cer"] for m in measured),
                "cpu": sum(m["cpu"] for m in measured),
                "wall": sum(m["wall"] for m in measured),
                "pages": sum(m["pages"] for m in measured),
            }
        )
    peak = (
        max(
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
        )
        / 1024
    )
    for row in rows:
        row["engine"] = engine
        row["peak_mb"] = peak
    return rows


def available_engines() -> list[str]:
    from extract.ocr import rapidocr_available, tesseract_binary

    engines = []
    if rapidocr_available():
        engines.append("rapidocr")
    if tesseract_binary() is not None:
        engines.append("tesseract")
    return engines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engines", nargs="*", default=None, help="default: every one installed")
    parser.add_argument("--pages", type=int, default=4, help="clean-print pages per DPI")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_engine(args.child, args.pages)))
        return
    engines = args.engines or available_engines()
    print(f"command: .venv/bin/python bench/ocr.py {shlex.join(sys.argv[1:])}".rstrip())
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"load average {os.getloadavg()[0]:.1f}\n"
    )
    print(
        "| engine | ground truth | dpi | pages | word recall (min) | CER | CPU s/page | wall s/page | peak RSS MB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    environment = {**os.environ, "OMP_NUM_THREADS": "1"}
    for engine in engines:
        child = subprocess.run(
            [sys.executable, __file__, "--child", engine, "--pages", str(args.pages)],
            capture_output=True,
            text=True,
            env=environment,
            check=True,
        )
        for row in json.loads(child.stdout.strip().splitlines()[-1]):
            pages = max(row["pages"], 1.0)
            low = f" ({row['min_recall']:.3f})" if "min_recall" in row else ""
            print(
                f"| {engine} | {row['set']} | {row['dpi']} | {row['pages']:.0f} | "
                f"{row['recall']:.3f}{low} | {row['cer']:.3f} | {row['cpu'] / pages:.2f} | "
                f"{row['wall'] / pages:.2f} | {row['peak_mb']:.0f} |"
            )


if __name__ == "__main__":
    main()
