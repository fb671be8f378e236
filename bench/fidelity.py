"""Extraction fidelity over the corpus: words kept and words invented, per document and page.

For every text PDF of ``CORPUS_DIR`` (the manifest's entries expected to give
text, scans excepted), the words of each page's PyMuPDF text layer against the
words of the extracted Markdown of that page (:mod:`extract.fidelity`). Pages
recognised by OCR, and pages whose text layer is garbage (U+FFFD-heavy, or not
words: :mod:`extract.plausibility`), are left out: there is no reference to judge by. Every
document is extracted in this process with :func:`extract.extract_document`,
layout analysis unbounded (``--budget``), OCR on as by default.

Usage::

    .venv/bin/python -m bench.fidelity [--only SUBSTRING …] [--max-pages N]
        [--cache DIR] [--reuse] [--worst N]
    .venv/bin/python -m bench.fidelity --layers   # the plausibility statistics per PDF

``--cache`` keeps each extraction's Markdown (``DIR/<path>.json``) and ``--reuse``
measures those instead of extracting again. Prints a Markdown table of every
document (recall, precision, worst page of each, CPU seconds to extract) and the
worst pages overall.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any, cast

REPO_DIR = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_DIR))

from extract import ExtractionError, ExtractionLimits, extract_document  # noqa: E402
from extract.fidelity import Fidelity, compare, markdown_words, words  # noqa: E402
from extract.form_fields import page_form_values  # noqa: E402
from extract.lam_alef import apply_fixes, lam_alef_fixes  # noqa: E402
from extract.ocr.plausibility import (  # noqa: E402
    MIN_ENGLISH_STOPWORDS,
    MIN_TOKENS,
    english_share,
    is_garbage,
    misread_share,
    odd_share,
    stopword_share,
    tokens,
)
from extract.ocr.text_layer import GARBAGE_SHARE, TextLayer  # noqa: E402
from extract.page_markers import find_page_markers  # noqa: E402
from tests.support.paths import CORPUS_DIR  # noqa: E402

MIN_PAGE_WORDS = 20
"""Pages with fewer text-layer words are listed but not ranked among the worst."""


def text_pdfs(max_pages: int | None = None) -> list[str]:
    """The manifest's PDFs that should come out as text from their own text layer."""
    entries: list[dict[str, Any]] = json.loads((CORPUS_DIR / "manifest.json").read_text())
    return [
        entry["path"]
        for entry in entries
        if entry["expect"] is not None
        and "text" in entry["expect"]
        and "scanned" not in entry["expect"]
        and entry["path"].endswith(".pdf")
        and (max_pages is None or (entry["pages"] or 0) <= max_pages)
    ]


def page_text_layer(page: Any) -> str:
    """A PyMuPDF page's text layer as the extractor reads it: its text blocks, in order
    (``get_text("blocks")``, as :func:`extract.ocr.describe_pdf_page` joins them), and the
    values of its filled form fields that it does not show (:mod:`extract.form_fields`),
    with Arabic lam-alef ligatures in their logical order (:mod:`extract.lam_alef`)."""
    layer = "\n".join(str(block[4]) for block in page.get_text("blocks") if block[6] == 0)
    layer = apply_fixes(layer, lam_alef_fixes(page, layer))
    return "\n".join([layer, *page_form_values(page, layer)])


def text_layer_pages(path: Path) -> list[str]:
    """Each page's text layer (empty where the page cannot be read)."""
    import pymupdf

    pages: list[str] = []
    with cast(Any, pymupdf).open(path) as document:
        for index in range(document.page_count):
            try:
                pages.append(page_text_layer(document[index]))
            except Exception:
                pages.append("")
    return pages


def page_bodies(markdown: str) -> dict[int, str]:
    """Page number (1-based) to that page's Markdown, its marker excluded."""
    markers = find_page_markers(markdown)
    ends = [marker.start for marker in markers[1:]] + [len(markdown)]
    return {
        marker.page: markdown[marker.end : end] for marker, end in zip(markers, ends, strict=True)
    }


def is_reference(text: str) -> bool:
    """Whether a page's text layer can judge its extraction (not garbage of either kind)."""
    return TextLayer(text, 0, 0).unmapped_share < GARBAGE_SHARE and not is_garbage(text)


def page_fidelity(layer: list[str], markdown: str, ocr_pages: set[int]) -> dict[int, Fidelity]:
    """Per page (1-based), the Markdown against the text layer; pages recognised by OCR and
    pages whose text layer is garbage left out."""
    bodies = page_bodies(markdown)
    return {
        number: compare(words(text), markdown_words(bodies.get(number, "")))
        for number, text in enumerate(layer, start=1)
        if number not in ocr_pages and is_reference(text)
    }


def print_layer_statistics(only: list[str]) -> None:
    """Per PDF of the manifest, the word-shape and stopword shares that
    :mod:`extract.ocr.plausibility` judges a text layer by, the pages it flags, and the
    highest misread share of its English pages (judged only over scans by the extractor)."""
    entries: list[dict[str, Any]] = json.loads((CORPUS_DIR / "manifest.json").read_text())
    print(
        "| document | pages judged | highest odd share | lowest stopword share | flagged "
        "| highest misread share (English pages) |"
    )
    print("|---|---:|---:|---:|---|---:|")
    for entry in entries:
        path = entry["path"]
        if not path.endswith(".pdf") or (only and not any(part in path for part in only)):
            continue
        try:
            layer = text_layer_pages(CORPUS_DIR / path)
        except Exception:
            continue  # encrypted or unreadable
        judged = [
            (odd_share(tokens(text)), stopword_share(tokens(text)), number, is_garbage(text))
            for number, text in enumerate(layer, start=1)
            if len(tokens(text)) >= MIN_TOKENS
        ]
        if not judged:
            continue
        flagged = [number for _, _, number, garbage in judged if garbage]
        misread = [
            misread_share(tokens(text))
            for text in layer
            if english_share(tokens(text)) >= MIN_ENGLISH_STOPWORDS
        ]
        print(
            f"| {path} | {len(judged)} | {max(judged)[0]:.2f} | "
            f"{min(row[1] for row in judged):.2f} | {', '.join(map(str, flagged)) or '–'} | "
            f"{max(misread, default=0.0):.2f} |"
        )


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _extract(path: str, limits: ExtractionLimits) -> dict[str, Any]:
    data = (CORPUS_DIR / path).read_bytes()
    started = _cpu()
    try:
        extraction = extract_document(data, Path(path).name, None, limits=limits)
    except ExtractionError as error:
        return {"error": f"{error.code}: {error.message}", "cpu": _cpu() - started}
    return {
        "markdown": extraction.markdown,
        "ocr_pages": list(extraction.ocr_pages),
        "warnings": list(extraction.warnings),
        "cpu": _cpu() - started,
    }


def _fmt(fidelity: Fidelity) -> str:
    return f"{fidelity.recall:.3f} / {fidelity.precision:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--only", nargs="*", default=[], help="paths containing any of these")
    parser.add_argument("--max-pages", type=int, default=None)
    parser.add_argument("--cache", type=Path, default=None, help="keep extractions here")
    parser.add_argument("--reuse", action="store_true", help="measure cached extractions")
    parser.add_argument("--budget", type=float, default=10_000.0, help="layout seconds")
    parser.add_argument("--worst", type=int, default=15, help="worst pages to list")
    parser.add_argument("--layers", action="store_true", help="text-layer plausibility only")
    arguments = parser.parse_args()
    if arguments.layers:
        print_layer_statistics(arguments.only)
        return
    limits = ExtractionLimits(layout_budget_seconds=arguments.budget, timeout_seconds=10_000.0)
    paths = [
        path
        for path in text_pdfs(arguments.max_pages)
        if not arguments.only or any(part in path for part in arguments.only)
    ]
    print(f"$ {' '.join(sys.argv)}  (load average {os.getloadavg()[0]:.1f})\n")
    print("| document | pages | recall | precision | worst page (recall / precision) | CPU s |")
    print("|---|---:|---:|---:|---|---:|")
    everything: list[Fidelity] = []
    worst: list[tuple[float, str, int, Fidelity]] = []
    for path in paths:
        cached = arguments.cache / f"{path}.json" if arguments.cache else None
        if arguments.reuse and cached is not None and cached.exists():
            result = json.loads(cached.read_text())
        else:
            wall = time.monotonic()
            result = _extract(path, limits)
            result["wall"] = time.monotonic() - wall
            if cached is not None:
                cached.parent.mkdir(parents=True, exist_ok=True)
                cached.write_text(json.dumps(result))
        if "error" in result:
            print(f"| {path} | – | – | – | {result['error']} | {result['cpu']:.1f} |")
            continue
        layer = text_layer_pages(CORPUS_DIR / path)
        pages = page_fidelity(layer, result["markdown"], set(result["ocr_pages"]))
        document = Fidelity.total(pages.values())
        everything.append(document)
        ranked = [
            (min(f.recall, f.precision), n, f)
            for n, f in pages.items()
            if f.reference >= MIN_PAGE_WORDS
        ]
        low = min(ranked, default=None)
        low_text = f"p. {low[1]}: {_fmt(low[2])}" if low else "–"
        worst.extend((score, path, number, f) for score, number, f in ranked)
        ocr = f" (OCR p. {', '.join(map(str, result['ocr_pages']))})" if result["ocr_pages"] else ""
        print(
            f"| {path}{ocr} | {len(layer)} | {document.recall:.3f} | {document.precision:.3f} "
            f"| {low_text} | {result['cpu']:.1f} |"
        )
    total = Fidelity.total(everything)
    print(
        f"\nAll {len(everything)} documents: recall {total.recall:.3f}, "
        f"precision {total.precision:.3f}, {total.reference} text-layer words.\n"
    )
    print("| worst pages | recall | precision | words |")
    print("|---|---:|---:|---:|")
    for _, path, number, fidelity in sorted(worst)[: arguments.worst]:
        print(
            f"| {path} p. {number} | {fidelity.recall:.3f} | {fidelity.precision:.3f} "
            f"| {fidelity.reference} |"
        )


if __name__ == "__main__":
    main()
