"""Page images over the corpus: how often a passage is found on its page, and what drawing costs.

**Locating.** Every PDF of ``CORPUS_DIR`` in the categories below (at most ``--max-pages``
pages) is extracted with :func:`extract.extract_document`, chunked as search chunks it
(:func:`retrieval.chunking.chunk_markdown`, 1,200 characters), and each passage is located on
its pages' word boxes (:func:`extract.locate.locate` over ``page.get_text("words")`` of the
pages it spans). A passage counts as *located* when its highlight covers at least 90 % of its
words. Passages without a letter or digit are left out. On a page whose text came from OCR the
passage is looked for on the recognised lines extraction kept (``Extraction.ocr_lines``), as
the service does; those passages are also counted apart.

**Drawing.** CPU time of :func:`extract.page_render.render_page` (open the PDF, draw the page at
150 dpi, encode the PNG), in this process, for the first three pages of each document: plain,
and with the page's first passage marked.

The fold of a document is ``tuning`` when it is one of :data:`LOOKED_AT` (the documents whose
passages were looked at while the locating rules were written: their figures are in-sample),
else ``test``.

Usage::

    .venv/bin/python -m bench.page_images [--only SUBSTRING …] [--max-pages N] [--cache DIR]

``--cache`` keeps each extraction's Markdown (``DIR/<path>.json``) for the next run.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_DIR))

from extract import ExtractionError, extract_document  # noqa: E402
from extract.locate import Box, WordBox, locate, passage_words  # noqa: E402  # noqa: E402
from extract.page_render import RenderRequest, ocr_words, page_words, render_page  # noqa: E402
from extract.wire import to_wire  # noqa: E402
from retrieval.chunking import chunk_markdown  # noqa: E402
from tests.support.paths import CORPUS_DIR  # noqa: E402

CATEGORIES = (
    "papers", "papers_acl", "tables", "forms", "scanned_ocr_layer", "scanned_image_only",
    "non_latin",
)  # fmt: skip
LOCATED = 0.9
"""Share of a passage's words its highlight must cover for it to count as located."""
LOOKED_AT = frozenset(
    {
        "papers/naacl06-shinyama.pdf",
        "papers/tracemonkey.pdf",
        "tables/senate-expenditures.pdf",
        "tables/WARN-Report-for-7-1-2015-to-03-25-2016.pdf",
        "non_latin/chinese-tables.pdf",
        "non_latin/russian.pdf",
        "non_latin/right_to_left_01.pdf",
        "forms/f1040nr.pdf",
        "scanned_ocr_layer/Seige_of_Vicksburg_Sample_OCR.pdf",
    }
)
RENDER_PAGES = 3


def documents(only: list[str], max_pages: int) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads((CORPUS_DIR / "manifest.json").read_text())
    return [
        entry
        for entry in entries
        if entry["category"] in CATEGORIES
        and entry["path"].endswith(".pdf")
        and entry["expect"] is not None
        and "text" in entry["expect"]
        and 0 < (entry["pages"] or 0) <= max_pages
        and (not only or any(part in entry["path"] for part in only))
    ]


def extracted(path: str, cache: Path | None) -> dict[str, Any] | None:
    stored = cache / f"{path}.json" if cache else None
    if stored is not None and stored.exists():
        cached: dict[str, Any] = json.loads(stored.read_text())
        if not cached["ocr_pages"]:
            cached.setdefault("ocr_lines", [])
        if "ocr_lines" in cached:  # else cached before the lines were kept: extract again
            return cached
    try:
        extraction = extract_document((CORPUS_DIR / path).read_bytes(), Path(path).name, None)
    except ExtractionError as error:
        print(f"{path}: not extracted ({error.code})", file=sys.stderr)
        return None
    result = {
        "markdown": extraction.markdown,
        "ocr_pages": list(extraction.ocr_pages),
        "ocr_lines": to_wire(list(extraction.ocr_lines)),
    }
    if stored is not None:
        stored.parent.mkdir(parents=True, exist_ok=True)
        stored.write_text(json.dumps(result))
    return result


def measure(entry: dict[str, Any], cache: Path | None) -> dict[str, Any] | None:
    import pymupdf

    path = entry["path"]
    done = extracted(path, cache)
    if done is None:
        return None
    data = (CORPUS_DIR / path).read_bytes()
    ocr_pages = set(done["ocr_pages"])
    recognised: dict[int, list[WordBox]] = defaultdict(list)
    for line in done["ocr_lines"]:
        recognised[int(line["page"])].append(WordBox(*line["box"], line["text"]))
    located = total = ocr_passages = ocr_located = 0
    worst: list[tuple[float, str]] = []
    first_passage: dict[int, str] = {}
    with pymupdf.open(stream=data) as document:
        words = {}
        for number in range(1, len(document) + 1):
            rect = document[number - 1].rect
            box = Box(rect.x0, rect.y0, rect.x1, rect.y1)
            words[number] = (
                ocr_words(recognised[number], box)
                if number in ocr_pages
                else page_words(document[number - 1])
            )
        for chunk in chunk_markdown("bench", done["markdown"]):
            if not passage_words(chunk.text):
                continue
            first, last = chunk.pages
            first_passage.setdefault(first, chunk.text)
            boxes = [box for page in range(first, last + 1) for box in words.get(page, [])]
            covered = locate(chunk.text, boxes).covered
            total += 1
            located += covered >= LOCATED
            if any(page in ocr_pages for page in range(first, last + 1)):
                ocr_passages += 1
                ocr_located += covered >= LOCATED
            if covered < LOCATED:
                worst.append((covered, f"{path} p. {first}: {chunk.text[:70]!r}"))
    plain: list[float] = []
    marked: list[float] = []
    for page in range(1, min(RENDER_PAGES, entry["pages"]) + 1):
        started = time.process_time()
        render_page(data, RenderRequest(kind="pdf", page=page))
        plain.append(time.process_time() - started)
        if page in first_passage:
            started = time.process_time()
            render_page(data, RenderRequest(kind="pdf", page=page, passage=first_passage[page]))
            marked.append(time.process_time() - started)
    return {
        "path": path,
        "category": entry["category"],
        "fold": "tuning" if path in LOOKED_AT else "test",
        "passages": total,
        "located": located,
        "ocr_passages": ocr_passages,
        "ocr_located": ocr_located,
        "plain": plain,
        "marked": marked,
        "worst": sorted(worst)[:3],
    }


def share(part: int, whole: int) -> str:
    return f"{part / whole:.1%}" if whole else "—"


def report(rows: list[dict[str, Any]]) -> None:
    print("| document | fold | passages | located (≥ 90 % of words) | on OCR'd pages | located |")
    print("|---|---|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['path']} | {row['fold']} | {row['passages']} | "
            f"{share(row['located'], row['passages'])} | {row['ocr_passages']} | "
            f"{share(row['ocr_located'], row['ocr_passages'])} |"
        )
    print()
    print("| category | fold | documents | passages | located |")
    print("|---|---|---:|---:|---:|")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[(row["category"], row["fold"])].append(row)
        groups[("all", row["fold"])].append(row)
    for (category, fold), members in sorted(groups.items()):
        passages = sum(row["passages"] for row in members)
        located = sum(row["located"] for row in members)
        print(f"| {category} | {fold} | {len(members)} | {passages} | {share(located, passages)} |")
    print()
    plain = [seconds * 1000 for row in rows for seconds in row["plain"]]
    marked = [seconds * 1000 for row in rows for seconds in row["marked"]]
    print("| drawing at 150 dpi (CPU ms per page) | pages | median | p90 | max |")
    print("|---|---:|---:|---:|---:|")
    for name, values in (("plain", plain), ("passage marked", marked)):
        if values:
            ordered = sorted(values)
            p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
            print(
                f"| {name} | {len(values)} | {statistics.median(values):.0f} | {p90:.0f} | "
                f"{ordered[-1]:.0f} |"
            )
    print()
    print("Worst passages:")
    for row in rows:
        for covered, where in row["worst"]:
            print(f"- {covered:.0%} {where}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=[])
    parser.add_argument("--max-pages", type=int, default=30)
    parser.add_argument("--cache", type=Path, default=None)
    arguments = parser.parse_args()
    rows = []
    for entry in documents(arguments.only, arguments.max_pages):
        row = measure(entry, arguments.cache)
        if row is not None:
            rows.append(row)
            print(f"{row['path']}: {share(row['located'], row['passages'])}", file=sys.stderr)
    report(rows)


if __name__ == "__main__":
    main()
