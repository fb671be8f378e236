"""Counting the structure pymupdf4llm recovers: Markdown tables and headings per document.

``python -m tests.support.structure --write`` records the counts of the current
layout path for ``tables/`` and ``papers/`` into ``tests/corpus/structure_counts.json``
(with an unlimited layout budget, so every page gets layout analysis);
``tests/corpus/test_structure.py`` checks that extraction still gives them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

from tests.support.paths import CORPUS_DIR, REPO_DIR

STRUCTURE_DIRS = ("tables", "papers")
COUNTS_FILE = REPO_DIR / "tests" / "corpus" / "structure_counts.json"

_TABLE_RULE = re.compile(r"^\|(?:\s*:?-{3,}:?\s*\|)+\s*$", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6} \S", re.MULTILINE)


def structure_counts(markdown: str) -> dict[str, int]:
    """Markdown tables (their ``|---|`` rule rows) and ATX headings in ``markdown``."""
    return {
        "tables": len(_TABLE_RULE.findall(markdown)),
        "headings": len(_HEADING.findall(markdown)),
    }


def structure_paths() -> list[Path]:
    return sorted(path for folder in STRUCTURE_DIRS for path in (CORPUS_DIR / folder).glob("*.pdf"))


def _record() -> dict[str, dict[str, int]]:
    from extract import ExtractionLimits, extract_document

    limits = ExtractionLimits(layout_budget_seconds=10_000.0, timeout_seconds=10_000.0)
    counts: dict[str, dict[str, int]] = {}
    for path in structure_paths():
        extraction = extract_document(path.read_bytes(), path.name, None, limits=limits)
        assert not any("budget" in warning for warning in extraction.warnings), path
        counts[str(path.relative_to(CORPUS_DIR))] = {
            "pages": extraction.page_count,
            **structure_counts(extraction.markdown),
        }
        print(path.name, counts[str(path.relative_to(CORPUS_DIR))], file=sys.stderr)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--write", action="store_true", help=f"write {COUNTS_FILE.name}")
    arguments = parser.parse_args()
    text = json.dumps(_record(), indent=2, sort_keys=True) + "\n"
    if arguments.write:
        COUNTS_FILE.write_text(text)
    else:
        print(text)


if __name__ == "__main__":
    main()
