"""The development set over ``../shared/corpus``: its documents, extracted once, and its questions.

``bench/data/corpus_dev.jsonl`` holds one question a line: ``question``,
``kind`` (``table``, ``number``, ``paraphrase``, ``non-english``, ``long``,
``unanswerable``), and for answerable ones the ``document`` (path under the
corpus folder) and the ``pages`` any of which answers it. The questions were
written by reading the extracted text of each document, before any tuning.

Extraction is slow (about a CPU-second a page), so the Markdown of each
document is cached under ``$SHORTLIST_BENCH_CACHE`` (default
``~/.cache/shortlist-bench``), keyed by the file's sha256 and the extractor's
output version; delete the folder to re-extract. From the repository root::

    .venv/bin/python -m bench.corpus_dev          # extract (or load) every document, print sizes
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from retrieval.rerankers.local import LocalReranker
from retrieval.types import SourceDocument
from tests.support.paths import CORPUS_DIR

DEV_SET = Path(__file__).resolve().parent / "data" / "corpus_dev.jsonl"
CACHE_DIR = Path(
    os.environ.get("SHORTLIST_BENCH_CACHE", Path.home() / ".cache" / "shortlist-bench")
)

DOCUMENTS = (
    "papers_acl/P19-1164.pdf",
    "papers_acl/W18-5713.pdf",
    "papers_acl/P19-1598.pdf",
    "papers_acl/D19-1539.pdf",
    "papers_acl/W18-4401.pdf",
    "papers/naacl06-shinyama.pdf",
    "papers/multi-column.pdf",
    "papers/test_3780.pdf",
    "papers/test_4026.pdf",
    "papers/fr_olap.pdf",
    "papers/TAMReview.pdf",
    "papers/tracemonkey.pdf",
    "tables/small-table.pdf",
    "tables/senate-expenditures.pdf",
    "tables/github_sample.pdf",
    "tables/dotted-gridlines.pdf",
    "non_latin/chinese-tables.pdf",
    "non_latin/kampo.pdf",
    "non_latin/jo.pdf",
    "long_100plus/test-3820.pdf",
)
"""The searched corpus: every question is asked over all of these at once."""


class Question(NamedTuple):
    question: str
    kind: str
    document: str | None
    """Corpus path of the answering document; ``None`` when nothing answers it."""
    pages: tuple[int, ...]


def load_questions(path: Path = DEV_SET) -> list[Question]:
    questions = []
    with path.open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                questions.append(
                    Question(
                        row["question"],
                        row["kind"],
                        row.get("document"),
                        tuple(row.get("pages", ())),
                    )
                )
    return questions


def markdown_of(relative: str) -> str:
    """The extractor's page-marked Markdown of one corpus file (cached)."""
    from extract.document import extract_document

    data = (CORPUS_DIR / relative).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    cached = CACHE_DIR / f"{digest}.md"
    if cached.exists():
        return cached.read_text(encoding="utf-8")
    extraction = extract_document(data, Path(relative).name, "application/pdf")
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    cached.write_text(extraction.markdown, encoding="utf-8")
    return extraction.markdown


def load_documents() -> list[SourceDocument]:
    """Every dev-set document as the service would hold it (id = corpus path)."""
    documents = []
    for relative in DOCUMENTS:
        markdown = markdown_of(relative)
        digest = hashlib.sha256(markdown.encode()).hexdigest()
        documents.append(SourceDocument(relative, Path(relative).name, digest, markdown))
    return documents


def warm_vectors(local: LocalReranker, passages: Iterable[tuple[str, str]], name: str) -> int:
    """Put the ``(key, text)`` passages' vectors in ``local``'s cache, reusing a bench-only
    file under :data:`CACHE_DIR` (``{name}-minilm.npz``); returns how many were embedded now.

    The reranker itself never persists vectors: this only spares repeated bench runs
    the 7 s per 100 passages embedding costs.
    """
    path = CACHE_DIR / f"{name}-minilm.npz"
    pending = dict(passages)
    if path.exists():
        saved = np.load(path)
        local.cache.put_many(
            local.model_id, zip(saved["keys"].tolist(), saved["vectors"], strict=True)
        )
    embedded = local.warm(pending.items())
    if embedded:
        known: dict[str, npt.NDArray[np.float32]] = {}
        if path.exists():
            saved = np.load(path)
            known.update(zip(saved["keys"].tolist(), saved["vectors"], strict=True))
        known.update(local.cache.get_many(local.model_id, pending))
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        keys = list(known)
        np.savez(path, keys=np.array(keys), vectors=np.stack([known[key] for key in keys]))
    return embedded


def main() -> None:
    for relative in DOCUMENTS:
        started = time.monotonic()
        markdown = markdown_of(relative)
        pages = markdown.count("<!-- page ")
        print(
            f"{relative}: {pages} pages, {len(markdown)} chars, {time.monotonic() - started:.0f} s"
        )


if __name__ == "__main__":
    main()
