"""What embedding passages costs, and what cheaper settings do to quality (SciFact *train* only).

Two tables:

1. **Cost**: CPU seconds (this process's user + system time, so a busy machine
   inflates wall time, not this figure much) per 100 passages for onnxruntime
   threads, batch size, length-sorted batches (little padding) or corpus order,
   graph optimisation level, memory arena and ``max_tokens``. The same sample
   of passages (from SciFact's corpus, chunked by the real index) is embedded
   by every configuration.
2. **Quality**: nDCG@10 over documents for the first ``--queries`` train
   queries (``qrels/train.tsv``), BM25's top ``--keep`` passages reranked by
   :class:`LocalReranker` with each ``max_tokens``. Batch shape, threads, graph
   level and arena do not change the vectors beyond float noise (the table says
   how far they move them), so only ``max_tokens`` is scored.

Also: the cost of one query's vector, which :class:`LocalReranker` reuses for
the same query text. From the repository root::

    .venv/bin/python -m bench.embed_cost                     # defaults below
    .venv/bin/python -m bench.embed_cost --sample 96 --queries 40 --keep 20
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np

from bench.quality import Corpus, load_corpus, load_qrels, load_queries, ndcg_at, rerank_positions
from retrieval.rerankers.embedder import GraphOptimization, MiniLMEmbedder
from retrieval.rerankers.local import LocalReranker


class Config(NamedTuple):
    label: str
    threads: int = 2
    batch: int = 8
    sorted_by_length: bool = True
    graph: GraphOptimization = "all"
    arena: bool = True
    max_tokens: int = 256


CONFIGS = (
    Config("before: 2 threads, batch 8, sorted, all, arena, 256"),
    Config("batch 1", batch=1),
    Config("batch 4", batch=4),
    Config("batch 16", batch=16),
    Config("batch 32", batch=32),
    Config("batch 8, corpus order (padding)", sorted_by_length=False),
    Config("1 thread, batch 1 (every session's batch since 2026-12-07)", threads=1, batch=1),
    Config("1 thread, batch 4 (the warm-up's session until 2026-12-07)", threads=1, batch=4),
    Config("1 thread, batch 8", threads=1),
    Config("graph: basic", graph="basic"),
    Config("graph: disable", graph="disable"),
    Config("no memory arena", arena=False),
    Config("max_tokens 192", max_tokens=192),
    Config("max_tokens 128", max_tokens=128),
)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cost(
    config: Config, texts: Sequence[str], reference: np.ndarray | None
) -> tuple[float, float, float, np.ndarray]:
    """(CPU s per 100, wall s per 100, max abs difference to ``reference``, vectors)."""
    embedder = MiniLMEmbedder(
        max_tokens=config.max_tokens,
        intra_op_num_threads=config.threads,
        graph_optimization=config.graph,
        memory_arena=config.arena,
    )
    embedder.embed(list(texts[:2]))  # first call allocates; not counted
    order = (
        sorted(range(len(texts)), key=lambda i: len(texts[i]))
        if config.sorted_by_length
        else list(range(len(texts)))
    )
    vectors = np.zeros((len(texts), 384), dtype=np.float32)
    cpu, wall = _cpu(), time.monotonic()
    for start in range(0, len(order), config.batch):
        rows = order[start : start + config.batch]
        vectors[rows] = embedder.embed([texts[i] for i in rows])
    cpu, wall = _cpu() - cpu, time.monotonic() - wall
    drift = float(np.abs(vectors - reference).max()) if reference is not None else 0.0
    return 100 * cpu / len(texts), 100 * wall / len(texts), drift, vectors


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="embedding cost and quality on SciFact train")
    parser.add_argument("--sample", type=int, default=160, help="passages embedded per config")
    parser.add_argument("--queries", type=int, default=60, help="train queries scored")
    parser.add_argument("--keep", type=int, default=30, help="BM25 passages reranked per query")
    parser.add_argument("--skip-quality", action="store_true")
    parser.add_argument("--skip-cost", action="store_true")
    parser.add_argument(
        "--max-tokens", default="256,192,128", help="max_tokens values scored, comma-separated"
    )
    args = parser.parse_args(argv)

    corpus = Corpus(load_corpus())
    queries = load_queries()
    if not args.skip_cost:
        _costs(corpus, queries, args.sample)
    if not args.skip_quality:
        limits = [int(value) for value in args.max_tokens.split(",")]
        _quality(corpus, queries, args.queries, args.keep, limits)


def _costs(corpus: Corpus, queries: dict[str, str], sample: int) -> None:
    step = max(1, len(corpus.chunks) // sample)
    texts = [text for _, text in corpus.passages[::step][:sample]]
    print(
        f"cost: {len(texts)} SciFact passages, {statistics.fmean(map(len, texts)):.0f} chars on average"
    )
    print("| configuration | CPU s / 100 passages | wall s / 100 | max |Δ| vs before |")
    print("| --- | ---: | ---: | ---: |")
    reference: np.ndarray | None = None
    for config in CONFIGS:
        cpu, wall, drift, vectors = cost(
            config, texts, reference if config.max_tokens == 256 else None
        )
        if reference is None:
            reference = vectors
        shown = f"{drift:.1e}" if config.max_tokens == 256 else "(other truncation)"
        print(f"| {config.label} | {cpu:.2f} | {wall:.2f} | {shown} |", flush=True)

    query_embedder = MiniLMEmbedder(intra_op_num_threads=2)
    sample_queries = list(queries.values())[:50]
    query_embedder.embed(sample_queries[:1])
    cpu = _cpu()
    for text in sample_queries:
        query_embedder.embed([text])
    print(
        f"\none query vector: {1000 * (_cpu() - cpu) / len(sample_queries):.1f} ms CPU (reused for a repeated query)"
    )


def _quality(
    corpus: Corpus, queries: dict[str, str], count: int, keep: int, limits: Sequence[int]
) -> None:
    qrels = load_qrels("train")
    query_ids = [q for q in qrels if q in queries][:count]
    print(f"\nquality: {len(query_ids)} train queries, BM25 top {keep} passages reranked")
    print("| max_tokens | nDCG@10 | CPU s to embed the candidates |")
    print("| ---: | ---: | ---: |")
    shortlists = {}
    for q in query_ids:
        scores = corpus.bm25(queries[q])
        shortlists[q] = (corpus.top(scores, keep), scores)
    bm25 = statistics.fmean(
        ndcg_at(corpus.documents_of(shortlists[q][0]), qrels[q]) for q in query_ids
    )
    print(f"| BM25 alone | {bm25:.3f} | 0 |")
    for max_tokens in limits:
        local = LocalReranker(max_tokens=max_tokens, intra_op_num_threads=2, warm_threads=2)
        cpu = _cpu()
        local.warm(corpus.passages[i] for q in query_ids for i in shortlists[q][0])
        spent = _cpu() - cpu
        ndcg = statistics.fmean(
            ndcg_at(
                corpus.documents_of(rerank_positions(corpus, local, queries[q], *shortlists[q])[0]),
                qrels[q],
            )
            for q in query_ids
        )
        print(f"| {max_tokens} | {ndcg:.3f} | {spent:.0f} |", flush=True)


if __name__ == "__main__":
    main()
