"""Choose how the local reranker fuses BM25 with MiniLM cosine, on SciFact's TRAIN split only.

Same corpus and passages as ``bench/quality.py`` (the real chunker and
tokenizer). For each train query (``qrels/train.tsv``) BM25's top 100
passages are reranked by cosine alone, reciprocal rank fusion and linear
fusion of min-max scores over a grid of BM25 weights; nDCG@10 is over
documents. The test split is never read. The choice is recorded in
``retrieval/rerankers/local.py``::

    .venv/bin/python -m bench.tune_fusion --vectors /tmp/scifact-minilm.npz
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from bench.quality import Corpus, load_corpus, load_qrels, load_queries, ndcg_at, warm_local
from retrieval.rerankers.fusion import linear_fusion, reciprocal_rank_fusion
from retrieval.rerankers.local import LocalReranker

PLATEAU = 0.005
"""nDCG@10 differences below this are noise at 809 queries: pick the middle of the plateau."""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Tune BM25 + cosine fusion on SciFact train")
    parser.add_argument("--keep", type=int, default=100)
    parser.add_argument("--vectors", type=Path, help="bench-only passage vector file (npz)")
    args = parser.parse_args(argv)

    corpus = Corpus(load_corpus())
    queries = load_queries()
    qrels = load_qrels("train")
    query_ids = [q for q in qrels if q in queries]
    local = LocalReranker()
    warm_note = warm_local(local, corpus, args.vectors)
    embedder = local.load()
    assert embedder is not None, "the local model did not load"

    shortlists: dict[str, tuple[list[int], list[float], list[float]]] = {}
    started = time.monotonic()
    for q in query_ids:
        scores = corpus.bm25(queries[q])
        positions = corpus.top(scores, args.keep)
        vectors = local.cache.get_many(local.model_id, (corpus.passages[i][0] for i in positions))
        query_vector = embedder.embed([queries[q]])[0]
        cosine = [float(np.dot(query_vector, vectors[corpus.passages[i][0]])) for i in positions]
        shortlists[q] = (positions, [float(scores[i]) for i in positions], cosine)
    shortlist_seconds = time.monotonic() - started

    def ndcg(fuse: str, weight: float = 0.0) -> float:
        values = []
        for q in query_ids:
            positions, bm25, cosine = shortlists[q]
            if fuse == "bm25":
                fused = bm25
            elif fuse == "cosine":
                fused = cosine
            elif fuse == "rrf":
                fused = reciprocal_rank_fusion([bm25, cosine])
            else:
                fused = linear_fusion(bm25, list(cosine), bm25_weight=weight)
            order = sorted(range(len(positions)), key=lambda n: (-fused[n], -bm25[n], n))
            values.append(ndcg_at(corpus.documents_of([positions[n] for n in order]), qrels[q]))
        return statistics.fmean(values)

    print(f"## Fusion on SciFact train: {len(query_ids)} queries, BM25 top {args.keep} passages\n")
    print("| method | nDCG@10 |")
    print("|---|---|")
    print(f"| BM25 alone | {ndcg('bm25'):.4f} |")
    print(f"| cosine alone | {ndcg('cosine'):.4f} |")
    print(f"| RRF (k = 60) | {ndcg('rrf'):.4f} |")
    curve = {step / 20: ndcg("linear", step / 20) for step in range(21)}
    for weight, value in curve.items():
        print(f"| linear, min-max, BM25 weight {weight:.2f} | {value:.4f} |")
    best_weight = max(curve, key=curve.__getitem__)
    plateau = [w for w, value in curve.items() if value >= curve[best_weight] - PLATEAU]
    print(f"\nBest linear BM25 weight: {best_weight:.2f} (nDCG@10 {curve[best_weight]:.4f}).")
    print(
        f"Weights within {PLATEAU} of it: {plateau[0]:.2f} to {plateau[-1]:.2f}; "
        f"the middle (lower of two), {statistics.median_low(plateau):.2f}, is the robust pick."
    )
    print(f"Vectors: {warm_note}; shortlists and query vectors: {shortlist_seconds:.0f} s.")
    print(
        "Command: `.venv/bin/python -m bench.tune_fusion"
        + (f" --vectors {args.vectors}`" if args.vectors else "`")
    )


if __name__ == "__main__":
    main()
