"""Search latency by corpus size: cached query-time BM25 versus a per-query bm25s rebuild.

Run from the repository root::

    .venv/bin/python -m bench.latency            # 1k, 10k and 100k chunks
    .venv/bin/python -m bench.latency --sizes 1000 10000 --queries 30

The corpus is SciFact abstracts (``SCIFACT_DIR/corpus.jsonl``) laid out as
page-marked Markdown documents of 20 abstracts (a heading per abstract, a page
marker every three), repeated with varied wording until the chunk count is
reached. Queries are SciFact claims. The reranker is a no-op, so the figures
are retrieval only: validate, shortlist (BM25 over the searched documents'
cached postings), cite.

* cold: the first query on an empty cache, including chunking and tokenising
  every document;
* warm: later queries, p50 and p95;
* each also as process CPU time, which stays meaningful on a shared, busy
  machine where wall-clock time does not;
* naive: what a service without the cache's postings would do per query,
  given the same cached token lists: build a ``bm25s.BM25(method="lucene")``
  index over every chunk, then score. Ratio = naive CPU p50 / warm CPU p50;
* stages: a warm search's p50 wall time in each stage (chunk, BM25 shortlist, rerank) and
  in what follows them (order, fold near-copies, mark words, answer spans, cite);
* prebuilt: the same ``bm25s`` index built once, then only scored and its best 100 taken
  per query: the floor a persistent index would give. Against it, the whole warm search
  (validate, shortlist, cite, mark, fold near-copies) and its BM25 shortlist alone
  (:func:`retrieval.shortlist.shortlist` over what the cache scores a warm search with).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from itertools import islice
from pathlib import Path

import bm25s
import numpy as np

from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.shortlist import shortlist
from retrieval.types import Candidate, RerankResult, SourceDocument

SCIFACT_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "ir" / "scifact"
ABSTRACTS_PER_DOCUMENT = 20
STAGES = ("chunk", "bm25", "rerank", "hits")
"""A warm search's stages (:class:`retrieval.types.StageSeconds`), then the rest of it: the
final order, near-copies folded, words marked, answer spans, citations."""


class NoOpReranker:
    """Keeps BM25 order at no cost, so timings are retrieval only."""

    name = "none"

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        return RerankResult(scores=[c.bm25 for c in candidates], reranked=False)


def load_abstracts(directory: Path) -> list[tuple[str, str]]:
    with (directory / "corpus.jsonl").open(encoding="utf-8") as lines:
        return [(row["title"], row["text"]) for row in map(json.loads, lines)]


def load_queries(directory: Path, count: int) -> list[str]:
    with (directory / "queries.jsonl").open(encoding="utf-8") as lines:
        return [json.loads(line)["text"] for line in islice(lines, count)]


def varied(text: str, variant: int, vocabulary: list[str], rng: random.Random) -> str:
    """The same abstract with every 6th word swapped for another corpus word (variant > 0)."""
    if variant == 0:
        return text
    words = text.split()
    for i in range(variant % 6, len(words), 6):
        words[i] = rng.choice(vocabulary)
    return " ".join(words)


def documents(
    abstracts: list[tuple[str, str]],
    seed: int = 7,
    *,
    per_document: int = ABSTRACTS_PER_DOCUMENT,
    per_page: int = 3,
) -> Iterator[SourceDocument]:
    """An endless stream of page-marked documents built from the abstracts."""
    rng = random.Random(seed)
    vocabulary = sorted({word for _, text in abstracts[:2000] for word in text.split()})
    number = 0
    for variant in range(10_000):
        for start in range(0, len(abstracts), per_document):
            parts: list[str] = []
            group = abstracts[start : start + per_document]
            for i, (title, text) in enumerate(group):
                if i % per_page == 0:
                    parts.append(f"<!-- page {i // per_page + 1} -->")
                parts.append(f"## {title}\n\n{varied(text, variant, vocabulary, rng)}")
            number += 1
            yield SourceDocument(
                f"doc-{number}", f"Document {number}.pdf", "v1", "\n\n".join(parts)
            )


def corpus(
    abstracts: list[tuple[str, str]],
    chunks: int,
    chunk_size: int,
    *,
    per_document: int = ABSTRACTS_PER_DOCUMENT,
    per_page: int = 3,
) -> list[SourceDocument]:
    """Enough documents for about ``chunks`` chunks (estimated from one sample)."""
    stream = documents(abstracts, per_document=per_document, per_page=per_page)
    sample = ChunkIndex(chunk_size=chunk_size)
    first = next(stream)
    sample.add([first])
    per_document = max(1, len(sample.chunks(first.ref)))
    count = max(1, round(chunks / per_document))
    return [first, *islice(stream, count - 1)]


def timed(function: Callable[[], object]) -> tuple[float, float]:
    """Wall-clock and process CPU seconds of one call (CPU time shrugs off a busy machine)."""
    wall, cpu = time.perf_counter(), time.process_time()
    function()
    return time.perf_counter() - wall, time.process_time() - cpu


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def measure(
    docs: list[SourceDocument], queries: list[str], naive_queries: int, chunk_size: int
) -> dict[str, float]:
    reranker = NoOpReranker()
    refs = [doc.ref for doc in docs]
    index = ChunkIndex(chunk_size=chunk_size, max_bytes=8 * 1024**3)
    cold = timed(lambda: search(index, queries[0], refs, reranker=reranker, documents=docs))
    chunk_count = sum(len(entry.chunks) for entry in index.documents(refs))
    warm: list[tuple[float, float]] = []
    stages: list[tuple[float, float, float, float]] = []
    for query in queries[1:]:
        wall, cpu = time.perf_counter(), time.process_time()
        result = search(index, query, refs, reranker=reranker)
        warm.append((time.perf_counter() - wall, time.process_time() - cpu))
        chunk, bm25, rerank = result.stage_seconds
        stages.append((chunk, bm25, rerank, warm[-1][0] - chunk - bm25 - rerank))

    tokens = [
        index.tokenizer.document_terms(chunk.passage)
        for entry in index.documents(refs)
        for chunk in entry.chunks
    ]

    def naive(query: str) -> None:
        retriever = bm25s.BM25(method="lucene")
        retriever.index(tokens, show_progress=False)
        known = [t for t in index.tokenizer.query_terms(query) if t in retriever.vocab_dict]
        if known:
            scores = retriever.get_scores(known)
            np.argpartition(-scores, min(100, len(scores) - 1))[:100]

    naive_times = [timed(partial(naive, q)) for q in queries[1 : 1 + naive_queries]]

    prebuilt_index = bm25s.BM25(method="lucene")
    prebuilt_index.index(tokens, show_progress=False)

    def prebuilt(query: str) -> None:
        known = [t for t in index.tokenizer.query_terms(query) if t in prebuilt_index.vocab_dict]
        if known:
            scores = prebuilt_index.get_scores(known)
            np.argpartition(-scores, min(100, len(scores) - 1))[:100]

    prebuilt_times = [timed(partial(prebuilt, q)) for q in queries[1:]]
    whole = index.documents(refs)
    searched = index.searched_terms(whole)  # what the warm searches above scored

    def shortlisted(query: str) -> None:
        _, ids, unknown = index.query_terms(query, whole)
        shortlist(ids, searched, unknown_terms=unknown)

    shortlist_times = [timed(partial(shortlisted, q)) for q in queries[1:]]
    return {
        "chunks": chunk_count,
        "documents": len(docs),
        "cold": cold[0],
        "cold_cpu": cold[1],
        "warm_p50": percentile([wall for wall, _ in warm], 50),
        "warm_p95": percentile([wall for wall, _ in warm], 95),
        "warm_cpu_p50": percentile([cpu for _, cpu in warm], 50),
        "naive_p50": percentile([wall for wall, _ in naive_times], 50),
        "naive_cpu_p50": percentile([cpu for _, cpu in naive_times], 50),
        "prebuilt_cpu_p50": percentile([cpu for _, cpu in prebuilt_times], 50),
        "shortlist_cpu_p50": percentile([cpu for _, cpu in shortlist_times], 50),
        "cache_mb": index.nbytes / 1024**2,
        **{
            f"stage_{name}": percentile([stage[n] for stage in stages], 50)
            for n, name in enumerate(STAGES)
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--queries", type=int, default=50, help="warm queries per size")
    parser.add_argument("--naive-queries", type=int, default=3, help="naive rebuilds per size")
    parser.add_argument("--chunk-size", type=int, default=1200)
    parser.add_argument("--scifact-dir", type=Path, default=SCIFACT_DIR)
    args = parser.parse_args(argv)

    abstracts = load_abstracts(args.scifact_dir)
    queries = load_queries(args.scifact_dir, args.queries + 1)
    rows = []
    for size in args.sizes:
        docs = corpus(abstracts, size, args.chunk_size)
        rows.append(measure(docs, queries, args.naive_queries, args.chunk_size))
        print(f"measured {size} chunks", file=sys.stderr, flush=True)

    print(
        f"Command: `{' '.join([Path(sys.executable).name, '-m', 'bench.latency', *sys.argv[1:]])}`"
    )
    print(
        f"Machine: {platform.machine()}, {platform.python_implementation()} "
        f"{platform.python_version()}, bm25s {bm25s.__version__}; "
        f"{args.queries} warm queries, {args.naive_queries} naive rebuilds per size\n"
    )
    print(
        "| chunks | documents | cold: first query (ms) | cold CPU (ms) | warm p50 (ms) "
        "| warm p95 (ms) | warm CPU p50 (ms) | naive rebuild p50 (ms) | naive CPU p50 (ms) "
        "| naive / warm, CPU p50 | prebuilt bm25s CPU p50 (ms) | warm / prebuilt "
        "| BM25 shortlist CPU p50 (ms) | shortlist / prebuilt | cache (MB) |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(
            f"| {row['chunks']:,.0f} | {row['documents']:,.0f} | {row['cold'] * 1000:,.0f} "
            f"| {row['cold_cpu'] * 1000:,.0f} | {row['warm_p50'] * 1000:.1f} "
            f"| {row['warm_p95'] * 1000:.1f} | {row['warm_cpu_p50'] * 1000:.1f} "
            f"| {row['naive_p50'] * 1000:,.0f} | {row['naive_cpu_p50'] * 1000:,.0f} "
            f"| {row['naive_cpu_p50'] / row['warm_cpu_p50']:.0f}x "
            f"| {row['prebuilt_cpu_p50'] * 1000:.2f} "
            f"| {row['warm_cpu_p50'] / row['prebuilt_cpu_p50']:.0f}x "
            f"| {row['shortlist_cpu_p50'] * 1000:.2f} "
            f"| {row['shortlist_cpu_p50'] / row['prebuilt_cpu_p50']:.1f}x "
            f"| {row['cache_mb']:,.0f} |"
        )
    print("\nWhere a warm search's wall time goes (p50 of each stage, ms):\n")
    print(f"| chunks | {' | '.join(STAGES)} |")
    print("|---:|" + "---:|" * len(STAGES))
    for row in rows:
        cells = " | ".join(f"{row[f'stage_{name}'] * 1000:.2f}" for name in STAGES)
        print(f"| {row['chunks']:,.0f} | {cells} |")
    print(f"\nLoad average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs.")


if __name__ == "__main__":
    main()
