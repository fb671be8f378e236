"""``retrieval`` reads page markers from ``extract`` without loading the extractors (#30).

Run in a fresh interpreter, since this test process has long since imported everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

EXTRACTOR_MODULES = (
    "extract.pdf",
    "extract.sandbox",
    "extract.ocr",
    "bs4",
    "defusedxml",
    "pymupdf",
)

PROBE = f"""
import json, sys
import retrieval, retrieval.chunking, retrieval.index
print(json.dumps(sorted(
    name for name in sys.modules
    if any(name == heavy or name.startswith(heavy + ".") for heavy in {EXTRACTOR_MODULES!r})
)))
"""


def test_importing_retrieval_loads_no_extractor() -> None:
    completed = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    assert json.loads(completed.stdout) == []


def test_the_extractors_still_load_on_first_use() -> None:
    probe = (
        "import sys, extract; extract.SandboxPool; "
        "print('extract.sandbox' in sys.modules, 'extract.pdf' in sys.modules)"
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    )
    assert completed.stdout.split() == ["True", "True"]
