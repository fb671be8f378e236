"""Retrieval quality: a page-level development set over ``../shared/corpus``, then SciFact.

The development set (:mod:`bench.corpus_dev`, one fold: ``--fold test`` by
default, ``tuning`` to tune on, ``all``): every question over all of its
documents at once, BM25 alone and BM25 + local, scored by
:mod:`retrieval.evaluation` (what ``shortlist eval`` reports): hit@1/3/10 count
a passage of the right document touching one of the right pages, per kind of
question; the flag columns give the share of answerable questions wrongly
flagged ``insufficient_evidence`` and of unanswerable ones rightly flagged.

SciFact: BM25, BM25 + local rerank, BM25 + Cohere.

Each of the 5,183 abstracts becomes one page-marked Markdown document
(``<!-- page 1 -->``, ``# {title}``, the abstract) and goes through the real
chunker and :class:`~retrieval.index.ChunkIndex`. The 300 test queries
(``qrels/test.tsv``) are scored with nDCG@10 and recall@100 over documents (a
document ranks where its best passage does; recall counts the first 100
distinct documents returned, and a reranked run returns only its ``keep``
passages, so fewer documents).

Two paths, checked against each other:

* the headline row, BM25 + local at keep=100, runs every query through
  :func:`retrieval.pipeline.search` with the warm :class:`LocalReranker`;
* the other rows score all passages once per query with bm25s over the
  project's own tokenizer terms (``index.tokenizer``; Lucene BM25, k1 = 1.5,
  b = 0.75, the same formula as ``retrieval.shortlist``) and rerank prefixes of
  that ranking the way the pipeline does. ``search`` costs about a second per
  query over 5,183 documents on a busy 2-core machine; this path costs
  milliseconds. The script prints how often the two paths' top 100 agree.

Shortlist recall is the share of the rerank-everything top 10 passages (the
local reranker scoring every passage of the corpus) that BM25's top ``keep``
passages contain. BM25 + Cohere runs only when ``COHERE_API_KEY`` holds a real
key (the test stand-in server is never used here). From the repository root::

    .venv/bin/python -m bench.quality                  # dev set, then 300 queries
    .venv/bin/python -m bench.quality --dev-only       # the development set's test fold only
    .venv/bin/python -m bench.quality --dev-only --fold tuning   # the fold to tune on
    .venv/bin/python -m bench.quality --queries 50     # fast subsample
    .venv/bin/python -m bench.quality --vectors /tmp/scifact-minilm.npz
        # reuse passage vectors saved by an earlier run (bench-only file;
        # the reranker itself never persists vectors)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import resource
import statistics
import time
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

import bm25s
import numpy as np
import numpy.typing as npt

from bench.corpus_dev import (
    Fold,
    Question,
    load_documents,
    load_questions,
    warm_multilingual,
    warm_vectors,
)
from retrieval.evaluation import CUTOFFS, TOP_K, Outcome, Scores, outcome, score, score_by_kind
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.base import Reranker
from retrieval.rerankers.local import LocalReranker
from retrieval.rerankers.none import NoReranker
from retrieval.shortlist import DEFAULT_KEEP, shortlist
from retrieval.types import Candidate, Chunk, DocumentRef, SearchResult, SourceDocument
from tests.support.paths import SCIFACT_DIR

Qrels = dict[str, dict[str, int]]
RERANK_TIMEOUT = 120.0
"""Generous: quality runs should score every candidate (the cache is warm)."""


def load_corpus(scifact_dir: Path = SCIFACT_DIR) -> list[SourceDocument]:
    """Every abstract as the page-marked Markdown the extractor would write."""
    documents = []
    with (scifact_dir / "corpus.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                row = json.loads(line)
                title, text = row.get("title", ""), row.get("text", "")
                markdown = f"<!-- page 1 -->\n# {title}\n\n{text}\n"
                digest = hashlib.sha256(markdown.encode()).hexdigest()
                documents.append(SourceDocument(str(row["_id"]), title, digest, markdown))
    return documents


def load_queries(scifact_dir: Path = SCIFACT_DIR) -> dict[str, str]:
    with (scifact_dir / "queries.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for line in lines if line.strip()]
    return {str(row["_id"]): row["text"] for row in rows}


def load_qrels(split: str, scifact_dir: Path = SCIFACT_DIR) -> Qrels:
    qrels: Qrels = {}
    with (scifact_dir / "qrels" / f"{split}.tsv").open(encoding="utf-8") as lines:
        next(lines)  # header
        for line in lines:
            query_id, doc_id, score = line.rstrip("\n").split("\t")
            qrels.setdefault(query_id, {})[doc_id] = int(score)
    return qrels


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG@k with linear gains, as BEIR computes it with pytrec_eval."""
    dcg = sum(relevant.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sorted(relevant.values(), reverse=True)[:k]
    idcg = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {doc for doc, gain in relevant.items() if gain > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


class Corpus:
    """SciFact chunked by the real index, plus a fast all-passages BM25 over the same terms."""

    def __init__(self, documents: Sequence[SourceDocument]) -> None:
        started = time.monotonic()
        self.documents = list(documents)
        self.refs: list[DocumentRef] = [doc.ref for doc in documents]
        self.index = ChunkIndex(max_bytes=8 * 1024**3)
        self.index.add(documents)
        self.index_seconds = time.monotonic() - started
        self.chunks: list[Chunk] = [c for ref in self.refs for c in self.index.chunks(ref)]
        self.passages: list[tuple[str, str]] = [
            passage for ref in self.refs for passage in self.index.reader_passages(ref)
        ]
        """``(key, text)`` of each chunk as BM25 and the reranker read it (in context)."""
        self._bm25 = bm25s.BM25()  # Lucene variant, k1 = 1.5, b = 0.75
        terms = [self.index.tokenizer.document_terms(text) for _, text in self.passages]
        self._bm25.index(terms, show_progress=False)

    def bm25(self, query: str) -> npt.NDArray[np.float64]:
        """BM25 of every passage (in ``self.chunks`` order)."""
        terms = self.index.tokenizer.query_terms(query)
        return np.asarray(self._bm25.get_scores(terms), dtype=np.float64)

    def top(self, scores: npt.NDArray[np.float64], k: int) -> list[int]:
        """Passage positions of the ``k`` best scores above 0, best first, ties in corpus order."""
        order = np.argsort(-scores, kind="stable")[:k]
        return [int(i) for i in order if scores[i] > 0]

    def documents_of(self, positions: Sequence[int]) -> list[str]:
        """Document ids in the order of their best passage."""
        return list(dict.fromkeys(self.chunks[i].document_id for i in positions))


def rerank_positions(
    corpus: Corpus,
    reranker: Reranker,
    query: str,
    positions: Sequence[int],
    scores: npt.NDArray[np.float64],
) -> tuple[list[int], tuple[str, ...]]:
    """``positions`` reordered as the pipeline orders a reranked shortlist, and warnings."""
    bm25 = [float(scores[i]) for i in positions]
    candidates = [Candidate(*corpus.passages[i], bm25[n]) for n, i in enumerate(positions)]
    result = reranker.rerank(query, candidates, deadline=time.monotonic() + RERANK_TIMEOUT)
    if not result.reranked:
        return list(positions), result.warnings
    order = sorted(range(len(positions)), key=lambda n: (-result.scores[n], -bm25[n], n))
    return [positions[n] for n in order], result.warnings


def warm_local(local: LocalReranker, corpus: Corpus, vectors: Path | None) -> str:
    """Fill the local reranker's cache: from a bench vectors file when given and present."""
    keys = list(dict.fromkeys(key for key, _ in corpus.passages))
    if vectors is not None and vectors.exists():
        saved = np.load(vectors)
        local.cache.put_many(
            local.model_id, zip(saved["keys"].tolist(), saved["vectors"], strict=True)
        )
        missing = local.warm(corpus.passages)
        return f"loaded from {vectors} ({missing} passages embedded on top)"
    started, cpu = time.monotonic(), time.process_time()
    local.warm(corpus.passages)
    seconds, cpu = time.monotonic() - started, time.process_time() - cpu
    if vectors is not None:
        found = local.cache.get_many(local.model_id, keys)
        np.savez(vectors, keys=np.array(keys), vectors=np.stack([found[k] for k in keys]))
    return (
        f"{len(keys)} passages in {seconds:.0f} s wall, {cpu:.0f} CPU-s "
        f"({100 * cpu / len(keys):.1f} CPU-s per 100)"
    )


class Row(NamedTuple):
    system: str
    ndcg10: float
    recall100: float
    note: str


def evaluate(rankings: dict[str, list[str]], qrels: Qrels) -> tuple[float, float]:
    ndcg = statistics.fmean(ndcg_at(rankings[q], qrels[q]) for q in rankings)
    recall = statistics.fmean(recall_at(rankings[q], qrels[q]) for q in rankings)
    return ndcg, recall


def _milliseconds(latencies: list[float]) -> str:
    ordered = sorted(latencies)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {1000 * statistics.median(ordered):.0f} ms, p95 {1000 * p95:.0f} ms"


def kind_label(question: Question) -> str:
    """The per-kind row a question counts in; non-English ones split by the question's language."""
    if question.kind == "non-english":
        return "non-english (asked in English)" if question.language == "en" else "non-english"
    return question.kind


def candidate_passages(
    index: ChunkIndex, refs: Sequence[DocumentRef], questions: Sequence[Question]
) -> set[tuple[str, str]]:
    """``(key, text)`` of every passage BM25 shortlists (at the default keep) for one of the
    questions: what the searches will rerank (embedding every passage of the 46 documents
    would cost several CPU-minutes more for nothing)."""
    indexed = index.documents(refs)
    matrices = [doc.terms for doc in indexed]
    found: set[tuple[str, str]] = set()
    for question in questions:
        _, ids, unknown = index.query_terms(question.question, indexed)
        for entry in shortlist(ids, matrices, keep=DEFAULT_KEEP, unknown_terms=unknown).entries:
            found.add(indexed[entry.document].reader_passage(entry.ordinal))
    return found


def dev_searches(
    index: ChunkIndex,
    refs: Sequence[DocumentRef],
    questions: Sequence[Question],
    reranker: Reranker,
) -> list[SearchResult]:
    """Each question searched over every dev-set document through the real pipeline, with
    every candidate given its time (the bench's :data:`RERANK_TIMEOUT`)."""
    return [
        search(
            index,
            question.question,
            refs,
            reranker=reranker,
            top_k=TOP_K,
            rerank_timeout=RERANK_TIMEOUT,
        )
        for question in questions
    ]


def development_set(local: LocalReranker, fold: Fold | None) -> None:
    """Page hit@1/3/10 and the verdict's flags per kind, BM25 alone and BM25 + local."""
    questions = load_questions(fold=fold)
    documents = load_documents()
    index = ChunkIndex()
    index.add(documents)
    refs = [doc.ref for doc in documents]
    passages = [passage for ref in refs for passage in index.reader_passages(ref)]
    started = time.monotonic()
    embedded = warm_vectors(local, candidate_passages(index, refs, questions), "corpus-dev")
    other = [passage for ref in refs for passage in index.other_language_passages(ref)]
    embedded += warm_multilingual(local, other, "corpus-dev")
    warm_seconds = time.monotonic() - started
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    wall_before = time.monotonic()
    systems: dict[str, list[Outcome]] = {}
    for reranker in (NoReranker(), local):
        name = "BM25" if reranker.name == "none" else f"BM25 + {reranker.name}"
        systems[name] = [
            outcome(question.labelled._replace(kind=kind_label(question)), result)
            for question, result in zip(
                questions, dev_searches(index, refs, questions, reranker), strict=True
            )
        ]
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    searched = time.monotonic() - wall_before
    cpu = (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime)
    answerable = sum(q.document is not None for q in questions)
    print(
        f"## Development set, fold {fold or 'all'}: {answerable} answerable and "
        f"{len(questions) - answerable} unanswerable questions over {len(documents)} corpus "
        f"documents ({len(passages)} passages)\n"
    )
    names = list(systems)
    print(
        "| kind | n | "
        + " | ".join(f"{name} hit@1 / @3 / @10 | {name} flagged" for name in names)
        + " |"
    )
    print("|---|---|" + "---|---|" * len(names))
    scored = {name: score_by_kind(outcomes) for name, outcomes in systems.items()}
    kinds = sorted(scored[names[0]], key=lambda kind: (kind in ("unanswerable", "near-miss"), kind))
    for kind in kinds:
        print(_row(kind, [scored[name][kind] for name in names]))
    totals = {name: score(outcomes) for name, outcomes in systems.items()}
    print(_row("**all answerable**", [totals[name] for name in names], absent=False))
    print(_row("**all unanswerable**", [totals[name] for name in names], present=False))
    print(
        "\nflagged: for answerable kinds the share the verdict wrongly flags "
        "(insufficient_evidence), for unanswerable ones the share it rightly flags."
    )
    for name, outcomes in systems.items():
        missed = [o.question.question for o in outcomes if o.question.answerable and not o.hit(3)]
        print(f"\nMissed at 3 ({name}, {len(missed)}): " + "; ".join(missed))
    print(
        "\nTargets (#25, test fold, default settings): hit@3 >= 0.90, hit@1 >= 0.70, "
        "unanswerable flagged >= 0.80 with answerable flagged <= 0.05, never below BM25 "
        "alone on hit@3.\n"
        f"Local reranker cache: {embedded} passages embedded now ({warm_seconds:.0f} s); "
        f"searches: {searched:.0f} s wall, {cpu:.0f} CPU-s; load average "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}; {time.strftime('%Y-%m-%d')}.\n"
    )


def _row(label: str, cells: Sequence[Scores], *, present: bool = True, absent: bool = True) -> str:
    """One table row: n, then hit@1/3/10 and the flag share for each system."""
    first = cells[0]
    parts = []
    if present and first.answerable:
        n = str(first.answerable)
        for cell in cells:
            hits = " / ".join(f"{cell.hit_at[k]:.2f}" for k in CUTOFFS)
            parts += [hits, f"{cell.false_flags:.2f}"]
    elif absent and first.unanswerable:
        n = str(first.unanswerable)
        for cell in cells:
            parts += ["", f"{cell.unanswerable_flagged:.2f}"]
    else:
        return ""
    return f"| {label} | {n} | " + " | ".join(parts) + " |"


def scifact_bm25(
    corpus: Corpus, queries: dict[str, str], qrels: Qrels, query_ids: Sequence[str]
) -> None:
    """The BM25 rows only (no embeddings): the fast path, and the pipeline with no reranker."""
    fast = {q: corpus.documents_of(corpus.top(corpus.bm25(queries[q]), 300)) for q in query_ids}
    piped: dict[str, list[str]] = {}
    for q in query_ids:
        result = search(
            corpus.index, queries[q], corpus.refs, reranker=NoReranker(),
            top_k=100, keep=100, max_candidates=100,
        )  # fmt: skip
        piped[q] = list(dict.fromkeys(hit.document_id for hit in result.hits))
    print(f"## SciFact test (BM25 only): {len(query_ids)} queries\n")
    print("| system | nDCG@10 | recall@100 |")
    print("|---|---|---|")
    for name, runs in (("BM25 (fast path)", fast), ("BM25 via `search`, keep=100", piped)):
        ndcg, recall = evaluate(runs, qrels)
        print(f"| {name} | {ndcg:.3f} | {recall:.3f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="SciFact retrieval quality")
    parser.add_argument("--queries", type=int, default=0, help="first N test queries (0 = all)")
    parser.add_argument(
        "--dev-only", action="store_true", help="only the development set over ../shared/corpus"
    )
    parser.add_argument("--skip-dev", action="store_true", help="only SciFact")
    parser.add_argument(
        "--fold",
        choices=("tuning", "test", "all"),
        default="test",
        help="the development set's fold to score (report test; tune on tuning)",
    )
    parser.add_argument(
        "--bm25-only", action="store_true", help="SciFact BM25 rows only (no embeddings)"
    )
    parser.add_argument("--vectors", type=Path, help="bench-only passage vector file (npz)")
    parser.add_argument(
        "--pipeline-queries", type=int, default=0, help="queries run through `search` (0 = all)"
    )
    args = parser.parse_args(argv)

    local = LocalReranker()
    if not args.skip_dev:
        development_set(local, None if args.fold == "all" else args.fold)
    if args.dev_only:
        return
    corpus = Corpus(load_corpus())
    queries = load_queries()
    qrels = load_qrels("test")
    query_ids = [q for q in qrels if q in queries][: args.queries or None]
    if args.bm25_only:
        scifact_bm25(corpus, queries, qrels, query_ids)
        return
    warm_note = warm_local(local, corpus, args.vectors)

    bm25_runs: dict[str, list[str]] = {}
    local_runs: dict[int, dict[str, list[str]]] = {100: {}, 200: {}}
    everything: dict[str, list[int]] = {}
    shortlists: dict[str, list[int]] = {}
    rerank_latency: list[float] = []
    warnings: set[str] = set()
    for q in query_ids:
        scores = corpus.bm25(queries[q])
        ranked = corpus.top(scores, len(corpus.chunks))
        shortlists[q] = ranked[:300]
        bm25_runs[q] = corpus.documents_of(ranked[:300])
        for keep, runs in local_runs.items():
            started = time.monotonic()
            order, notes = rerank_positions(corpus, local, queries[q], ranked[:keep], scores)
            if keep == 100:
                rerank_latency.append(time.monotonic() - started)
            runs[q] = corpus.documents_of(order)
            warnings.update(notes)
        all_positions = list(range(len(corpus.chunks)))
        order, notes = rerank_positions(corpus, local, queries[q], all_positions, scores)
        everything[q] = order[:10]
        warnings.update(notes)

    # The headline row through the real pipeline, and agreement of the two BM25 paths.
    pipeline_runs: dict[str, list[str]] = {}
    pipeline_latency: list[float] = []
    agree = 0
    pipeline_ids = query_ids[: args.pipeline_queries or None]
    for q in pipeline_ids:
        started = time.monotonic()
        result = search(
            corpus.index, queries[q], corpus.refs, reranker=local,
            top_k=100, keep=100, max_candidates=100, rerank_timeout=RERANK_TIMEOUT,
        )  # fmt: skip
        pipeline_latency.append(time.monotonic() - started)
        pipeline_runs[q] = list(dict.fromkeys(hit.document_id for hit in result.hits))
        shortlisted = {corpus.chunks[i].id for i in shortlists[q][:100]}
        agree += {hit.chunk_id for hit in result.hits} == shortlisted
        warnings.update(result.warnings)

    rows = [
        Row("BM25", *evaluate(bm25_runs, qrels), f"index build {corpus.index_seconds:.0f} s"),
        Row(
            f"BM25 + local, keep=100, via `search` ({len(pipeline_ids)} queries)",
            *evaluate(pipeline_runs, qrels),
            f"search {_milliseconds(pipeline_latency)}",
        ),
        Row(
            "BM25 + local, keep=100",
            *evaluate(local_runs[100], qrels),
            f"rerank {_milliseconds(rerank_latency)} (warm cache)",
        ),
        Row("BM25 + local, keep=200", *evaluate(local_runs[200], qrels), ""),
        Row(
            "local, rerank everything",
            *evaluate({q: corpus.documents_of(everything[q]) for q in query_ids}, qrels),
            "top 10 only (recall@100 n/a)",
        ),
    ]
    rows[-1] = rows[-1]._replace(recall100=math.nan)
    api_key = os.environ.get("COHERE_API_KEY")
    if api_key:
        from retrieval.rerankers.cohere import CohereReranker

        cohere = CohereReranker(api_key)
        cohere_runs: dict[str, list[str]] = {}
        for q in query_ids:
            scores = corpus.bm25(queries[q])
            order, notes = rerank_positions(
                corpus, cohere, queries[q], corpus.top(scores, 100), scores
            )
            cohere_runs[q] = corpus.documents_of(order)
            warnings.update(notes)
        rows.append(
            Row(f"BM25 + Cohere {cohere.model}, keep=100", *evaluate(cohere_runs, qrels), "")
        )
        cohere.close()
    else:
        rows.append(Row("BM25 + Cohere", math.nan, math.nan, "skipped: COHERE_API_KEY not set"))

    kept = {
        keep: statistics.fmean(
            len(set(everything[q]) & set(shortlists[q][:keep])) / max(1, len(everything[q]))
            for q in query_ids
        )
        for keep in (100, 200)
    }
    print(
        f"## SciFact test: {len(query_ids)} queries, {len(corpus.documents)} documents, "
        f"{len(corpus.chunks)} passages\n"
    )
    print("| system | nDCG@10 | recall@100 | notes |")
    print("|---|---|---|---|")
    for row in rows:
        shown = ["n/a" if math.isnan(v) else f"{v:.3f}" for v in (row.ndcg10, row.recall100)]
        print(f"| {row.system} | {shown[0]} | {shown[1]} | {row.note} |")
    print("\n| shortlist | share of the rerank-everything top 10 passages kept |")
    print("|---|---|")
    for keep, share in kept.items():
        print(f"| keep={keep} | {share:.3f} |")
    print(
        f"\nPipeline shortlist = fast-path top 100 for {agree} of {len(pipeline_ids)} queries.\n"
        f"Local reranker cache warm-up: {warm_note}.\n"
        f"Warnings seen: {sorted(warnings) or 'none'}.\n"
        "Targets: BM25 >= 0.68, BM25 + local >= 0.72, shortlist keep=100 >= 0.95.\n"
        f"Hardware: {platform.machine()}, {os.cpu_count()} CPUs (shared), "
        f"Python {platform.python_version()}, 1 run.\n"
        "Command: `.venv/bin/python -m bench.quality"
        + (f" --queries {args.queries}" if args.queries else "")
        + (f" --vectors {args.vectors}" if args.vectors else "")
        + (f" --pipeline-queries {args.pipeline_queries}" if args.pipeline_queries else "")
        + "`"
    )


if __name__ == "__main__":
    main()
