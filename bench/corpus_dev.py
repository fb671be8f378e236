"""The development set over ``../shared/corpus``: its documents, extracted once, and its questions.

``bench/data/corpus_dev.jsonl`` holds one labelled question a line, in the format
``shortlist eval`` reads (:mod:`retrieval.evaluation`): ``question``; for an
answerable one the ``document`` (here its path under the corpus folder, which is
also its id in the bench) and the ``pages`` (1-based PDF pages) *any* of which
answers it, every such page listed; for an unanswerable one ``"answerable": false``.
Each row also carries:

* ``kind``, one of :data:`KINDS`: ``document`` (what a paper concludes, its
  findings, limitations, what it is about), ``list``, ``number``, ``table`` (a
  cell), ``paraphrase`` (the question's words differ from the text's),
  ``multi-part``, ``non-english`` (a document not in English, asked in its own
  language or in English), ``long`` (a document of 100+ pages), ``ocr`` (a
  scan: ``scanned_image_only/``, ``scanned_ocr_layer/``), ``form``,
  ``unanswerable`` (off-topic) and ``near-miss`` (the topic is in the corpus, the
  answer is not; ``near`` names the document it is about);
* ``language``: the question's language (ISO 639-1); with ``kind`` ``non-english``
  and ``language`` ``en`` it is an English question about a document that is not
  in English;
* ``fold``: ``tuning`` or ``test``. Tune on ``tuning``; report ``test``. The 55
  questions written for #15 (marked ``pretuned``) had been tuned on before the
  folds existed and are all in ``tuning``. Every later question got its fold when
  it was added (:func:`assign_folds`): within its kind, the fold with fewer of the
  kind's questions so far, ties broken by a hash of the question, so the folds stay
  stratified by kind, about half each, and adding questions never moves one.

How the questions were written: by a person reading each document's pages as
PyMuPDF gives them (``page.get_text()``) or as rendered images (every scan, every
table whose cells the text order scrambles), never from Shortlist's extraction or
its results, so page numbers do not depend on our extractor. Each answerable
question was checked against its page(s), and the document searched for every
other page that answers it. Wording follows how people and assistants ask (short
keyword queries, full questions, other words than the text's); ``linn.txt`` is the
ground truth of the LinnSequencer scan.

Extraction is slow (about a CPU-second a page), so the Markdown of each
document is cached under ``$SHORTLIST_BENCH_CACHE`` (default
``~/.cache/shortlist-bench``), keyed by the file's sha256 and by
:func:`extractor_fingerprint` (the extractor's source and the versions of the libraries
it reads PDFs with), so a changed extractor is never answered from a stale cache. From
the repository root::

    .venv/bin/python -m bench.corpus_dev                  # extract (or load) every document
    .venv/bin/python -m bench.corpus_dev --part 1/2 & .venv/bin/python -m bench.corpus_dev --part 2/2
    .venv/bin/python -m bench.corpus_dev --assign-folds   # give new questions their fold
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from extract.types import ExtractionLimits, OcrOptions
from retrieval.errors import InvalidLabel
from retrieval.evaluation import LabelledQuestion, parse_line
from retrieval.rerankers.local import LocalReranker
from retrieval.rerankers.vector_cache import VectorCache
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
    "papers/test_4751.pdf",
    "papers/federal-register-2020-17221.pdf",
    "papers/issue-1061-colour-space-stack.pdf",
    "tables/WARN-Report-for-7-1-2015-to-03-25-2016.pdf",
    "tables/nics-background-checks-2015-11-rotated.pdf",
    "tables/i1040nr.pdf",
    "tables/test-styled-table.pdf",
    "forms/f1040nr.pdf",
    "forms/cms-etc-filled.pdf",
    "forms/test-2333.pdf",
    "scanned_image_only/linn.pdf",
    "scanned_image_only/c02-22.pdf",
    "scanned_image_only/175.pdf",
    "scanned_image_only/test_3863.pdf",
    "scanned_image_only/test_4034.pdf",
    "scanned_image_only/test_4090.pdf",
    "scanned_image_only/issue7229.pdf",
    "scanned_ocr_layer/Seige_of_Vicksburg_Sample_OCR.pdf",
    "scanned_ocr_layer/pdf-with-ocr-text.pdf",
    "non_latin/korean-text-with-tables.pdf",
    "non_latin/nlp2004slides.pdf",
    "non_latin/right_to_left_01.pdf",
    "long_100plus/GeoTopo-komprimiert.pdf",
    "long_100plus/mupdf_explored.pdf",
    "long_100plus/freeculture.pdf",
    "long_100plus/pdf2image-memory-error-test-400p.pdf",
)
"""The searched corpus: every question is asked over all of these at once."""

LAYOUT_BUDGET_SECONDS = 24 * 3600.0
"""Every page gets the layout engine, however busy the machine: the service reads a long PDF
in parallel parts, each with its own budget, so an in-process run with the default budget
would fall back to plain text on pages the service lays out (and differ from run to run)."""
OCR_PAGE_SECONDS = 3600.0
"""Every scanned page is recognised, however busy the machine: with the default budgets (20 s
a page, and no page started past a share of the 120 s extraction timeout) a run at load 15 left
out the later pages of four scans and TAMReview's re-recognised text (#25), so the figures
depended on the load. In-process there is no sandbox to kill, so the timeout is only the
budgets' clock."""


def extraction_limits() -> ExtractionLimits:
    """The limits the bench extracts with: no time budget cuts a page short."""
    return ExtractionLimits(
        timeout_seconds=LAYOUT_BUDGET_SECONDS,
        timeout_ceiling_seconds=LAYOUT_BUDGET_SECONDS,
        layout_budget_seconds=LAYOUT_BUDGET_SECONDS,
        ocr=OcrOptions(page_seconds=OCR_PAGE_SECONDS),
    )


EXTRACTOR_DISTRIBUTIONS = ("pymupdf", "pymupdf4llm", "rapidocr", "onnxruntime", "pillow")
"""The libraries whose version changes what the extractor writes for a PDF."""

Fold = Literal["tuning", "test"]
FOLDS: tuple[Fold, ...] = ("tuning", "test")
KINDS = (
    "document", "list", "number", "table", "paraphrase", "multi-part", "non-english",
    "long", "ocr", "form", "unanswerable", "near-miss",
)  # fmt: skip
"""The closed set of question kinds (see the module docstring)."""


class Question(NamedTuple):
    question: str
    kind: str
    document: str | None
    """Corpus path of the answering document; ``None`` when nothing answers it."""
    pages: tuple[int, ...]
    fold: Fold
    language: str = "en"
    near: str | None = None
    """For a near miss: the corpus document whose topic it is about."""

    @property
    def labelled(self) -> LabelledQuestion:
        """The question as :mod:`retrieval.evaluation` scores it."""
        return LabelledQuestion(self.question, self.document, self.pages, self.kind)


def load_questions(path: Path = DEV_SET, fold: Fold | None = None) -> list[Question]:
    """The dev set's questions (only ``fold``'s when given), checked as ``shortlist eval``
    checks a file.

    Raises:
        InvalidLabel: a line is not a labelled question, or lacks its kind or fold.
    """
    questions = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            labelled = parse_line(line, number)
            if labelled is None:
                continue
            row = json.loads(line)
            if row.get("kind") not in KINDS:
                raise InvalidLabel(number, f'"kind" must be one of {", ".join(KINDS)}')
            if row.get("fold") not in FOLDS:
                raise InvalidLabel(number, '"fold" must be "tuning" or "test"')
            if fold is None or row["fold"] == fold:
                questions.append(
                    Question(
                        labelled.question,
                        labelled.kind,
                        labelled.document,
                        labelled.pages,
                        row["fold"],
                        row.get("language", "en"),
                        row.get("near"),
                    )
                )
    return questions


def assign_folds(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with a ``fold`` for each row that lacks one, in order: within its kind,
    the fold holding fewer of the kind's non-pretuned rows so far; a tie goes by a hash
    of the question (so the folds do not simply alternate from ``tuning``)."""
    counts: dict[str, dict[str, int]] = {}
    placed = []
    for row in rows:
        row = dict(row)
        tally = counts.setdefault(row["kind"], dict.fromkeys(FOLDS, 0))
        if "fold" not in row:
            if tally["tuning"] == tally["test"]:
                digest = hashlib.sha256(row["question"].encode()).digest()
                row["fold"] = FOLDS[digest[0] % 2]
            else:
                row["fold"] = min(FOLDS, key=lambda fold: tally[fold])
        if not row.get("pretuned"):
            tally[row["fold"]] += 1
        placed.append(row)
    return placed


def write_folds(path: Path = DEV_SET) -> int:
    """Give the file's rows without a fold their fold (:func:`assign_folds`); how many."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    missing = sum("fold" not in row for row in rows)
    placed = assign_folds(rows)
    path.write_text(
        "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in placed), encoding="utf-8"
    )
    return missing


@functools.cache
def extractor_fingerprint() -> str:
    """16 hex digits of a sha256 over every source file of ``extract/`` (path and bytes, in
    path order), the bench's :func:`extraction_limits` and the installed versions of
    :data:`EXTRACTOR_DISTRIBUTIONS`: the cache key's half that changes whenever the
    extractor could write different Markdown."""
    import extract

    digest = hashlib.sha256()
    root = Path(extract.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes())
    digest.update(repr(extraction_limits()).encode() + b"\0")
    for name in EXTRACTOR_DISTRIBUTIONS:
        try:
            version = metadata.version(name)
        except metadata.PackageNotFoundError:
            version = "absent"
        digest.update(f"{name}=={version}\0".encode())
    return digest.hexdigest()[:16]


def markdown_of(relative: str) -> str:
    """The extractor's page-marked Markdown of one corpus file (cached per file and
    :func:`extractor_fingerprint`)."""
    from extract.document import extract_document

    data = (CORPUS_DIR / relative).read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    cached = CACHE_DIR / f"{digest}-{extractor_fingerprint()}-full-layout.md"
    if cached.exists():
        return cached.read_text(encoding="utf-8")
    limits = extraction_limits()
    extraction = extract_document(data, Path(relative).name, "application/pdf", limits=limits)
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    partial = cached.with_name(f"{cached.name}.{os.getpid()}.part")
    partial.write_text(extraction.markdown, encoding="utf-8")
    partial.replace(cached)  # atomic: an interrupted run leaves no truncated cache entry
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
    """Put the ``(key, text)`` passages' MiniLM vectors in ``local``'s cache, reusing a
    bench-only file under :data:`CACHE_DIR` (``{name}-minilm-{max_tokens}.npz``); returns how
    many were embedded now.

    The reranker itself never persists vectors: this only spares repeated bench runs
    the 7 s per 100 passages embedding costs.
    """
    pending = dict(passages)
    path = CACHE_DIR / f"{name}-minilm-{local.max_tokens}.npz"
    return _with_saved_vectors(
        local.cache, local.model_id, path, pending, lambda: local.warm(pending.items())
    )


def warm_multilingual(local: LocalReranker, passages: Iterable[tuple[str, str]], name: str) -> int:
    """:func:`warm_vectors` for the multilingual vectors of ``passages`` (those of documents not
    in English), in ``{name}-e5-{max_tokens}.npz`` (about 30 CPU s per 100 passages)."""
    if local.matcher is None:
        return 0
    pending = dict(passages)
    path = CACHE_DIR / f"{name}-e5-{local.max_tokens}.npz"
    return _with_saved_vectors(
        local.cache,
        local.matcher.model_id,
        path,
        pending,
        lambda: local.warm_across_languages(pending.items()),
    )


def _with_saved_vectors(
    cache: VectorCache, model_id: str, path: Path, pending: dict[str, str], work: Callable[[], int]
) -> int:
    """Load the model's vectors saved at ``path`` into ``cache``, run ``work`` (which embeds
    what of ``pending`` is missing), and save what it added; returns ``work``'s count."""
    saved: dict[str, npt.NDArray[np.float32]] = {}
    if path.exists():
        with np.load(path) as stored:
            saved = dict(zip(stored["keys"].tolist(), stored["vectors"], strict=True))
        cache.put_many(model_id, saved.items())
    embedded = work()
    if embedded:
        saved.update(cache.get_many(model_id, pending))
        CACHE_DIR.mkdir(parents=True, exist_ok=True)
        keys = list(saved)
        np.savez(path, keys=np.array(keys), vectors=np.stack([saved[key] for key in keys]))
    return embedded


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The development set's documents and folds")
    parser.add_argument(
        "--assign-folds", action="store_true", help="give questions without a fold their fold"
    )
    parser.add_argument(
        "--part",
        default="1/1",
        help="K/N: extract only every Nth document from the Kth (run N at once on N cores)",
    )
    args = parser.parse_args(argv)
    if args.assign_folds:
        print(f"{write_folds()} questions given a fold")
        return
    part, parts = (int(n) for n in args.part.split("/"))
    print(f"extractor fingerprint {extractor_fingerprint()}, cache {CACHE_DIR}")
    for relative in DOCUMENTS[part - 1 :: parts]:
        started = time.monotonic()
        markdown = markdown_of(relative)
        pages = markdown.count("<!-- page ")
        print(
            f"{relative}: {pages} pages, {len(markdown)} chars, {time.monotonic() - started:.0f} s"
        )


if __name__ == "__main__":
    main()
