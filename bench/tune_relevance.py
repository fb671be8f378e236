"""Fit the absolute relevance (:mod:`retrieval.relevance`) and choose the evidence floor.

Training data only:

1. **Calibration** on SciFact's *train* split: for a seeded sample of train
   queries, BM25's top ``--depth`` passages each, labelled relevant when their
   abstract is in the query's qrels. Features: query-term coverage
   (:func:`retrieval.shortlist.term_coverage`) and the raw MiniLM cosine. Two
   logistic regressions with balanced classes (Newton's method, a little L2):
   ``LEXICAL`` on coverage, ``LOCAL`` on (cosine, coverage).
2. **Floor** on the development set's tuning fold ``bench/data/corpus_dev.jsonl``
   (questions over ``../shared/corpus``, some of which nothing answers): every question
   through :func:`retrieval.pipeline.search` with the fitted calibration; the
   floor is the highest one that wrongly flags at most 5 % of the answerable
   questions, and the table shows what each floor does.

From the repository root::

    .venv/bin/python -m bench.tune_relevance                 # 200 train queries
    .venv/bin/python -m bench.tune_relevance --queries 60    # faster
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from bench.corpus_dev import load_documents, load_questions, warm_vectors
from bench.quality import Corpus, load_corpus, load_qrels, load_queries
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.relevance import EVIDENCE_FLOOR, LEXICAL, LOCAL, Calibration
from retrieval.rerankers.local import LocalReranker
from retrieval.rerankers.none import NoReranker
from retrieval.shortlist import shortlist
from retrieval.types import Chunk

FloatArray = npt.NDArray[np.float64]


def logistic_weights(
    features: FloatArray,
    labels: FloatArray,
    *,
    l2: float,
    iterations: int = 50,
    tolerance: float = 1e-8,
) -> FloatArray:
    """Balanced-class logistic regression by Newton's method (IRLS): the features' weights,
    then the intercept."""
    rows = np.hstack([features, np.ones((len(features), 1))])
    positives = labels.sum()
    weight = np.where(labels > 0, 0.5 / positives, 0.5 / (len(labels) - positives))
    beta = np.zeros(rows.shape[1])
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-rows @ beta))
        gradient = rows.T @ (weight * (p - labels)) + l2 * beta
        hessian = (rows * (weight * p * (1 - p))[:, None]).T @ rows + l2 * np.eye(len(beta))
        step = np.linalg.solve(hessian, gradient)
        beta -= step
        if np.abs(step).max() < tolerance:
            break
    return beta


def fit_logistic(features: FloatArray, labels: FloatArray, *, l2: float = 1e-3) -> Calibration:
    """Balanced-class logistic regression (:func:`logistic_weights`), rounded for the code."""
    beta = logistic_weights(features, labels, l2=l2)
    return Calibration(tuple(round(float(b), 2) for b in beta[:-1]), round(float(beta[-1]), 2))


def auc(scores: Sequence[float], labels: Sequence[float]) -> float:
    """Area under the ROC curve (Mann-Whitney U over all positive/negative pairs)."""
    order = np.argsort(scores, kind="stable")
    ranks = np.empty(len(scores))
    ranks[order] = np.arange(1, len(scores) + 1)
    positive = np.asarray(labels) > 0
    n_pos, n_neg = positive.sum(), (~positive).sum()
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def scifact_features(
    corpus: Corpus, local: LocalReranker, query_ids: Sequence[str], depth: int
) -> tuple[FloatArray, FloatArray]:
    """``(cosine, coverage)`` of BM25's top ``depth`` passages per query (through the real
    shortlist over every abstract), and 0/1 labels from the train qrels."""
    queries, qrels = load_queries(), load_qrels("train")
    indexed = corpus.index.documents(corpus.refs)
    matrices = [doc.terms for doc in indexed]
    picked: dict[str, list[tuple[Chunk, float]]] = {}
    read: dict[str, list[tuple[str, str]]] = {}
    """``(key, text)`` of each picked passage as the reranker reads it."""
    for q in query_ids:
        _, ids, unknown = corpus.index.query_terms(queries[q], indexed)
        entries = shortlist(ids, matrices, keep=depth, unknown_terms=unknown).entries
        picked[q] = [
            (indexed[entry.document].chunks[entry.ordinal], entry.coverage) for entry in entries
        ]
        read[q] = [indexed[entry.document].reader_passage(entry.ordinal) for entry in entries]
    warm_vectors(local, (passage for q in query_ids for passage in read[q]), "scifact")
    embedder = local.load()
    assert embedder is not None, local.load_error
    rows: list[tuple[float, float]] = []
    labels: list[float] = []
    for q in query_ids:
        query_vector = embedder.embed([queries[q]])[0]
        vectors = local.cache.get_many(local.model_id, (key for key, _ in read[q]))
        for (chunk, covered), (key, _) in zip(picked[q], read[q], strict=True):
            rows.append((float(np.dot(query_vector, vectors[key])), covered))
            labels.append(1.0 if qrels[q].get(chunk.document_id, 0) > 0 else 0.0)
    return np.asarray(rows), np.asarray(labels)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="fit relevance, choose the evidence floor")
    parser.add_argument("--queries", type=int, default=200, help="SciFact train queries sampled")
    parser.add_argument("--depth", type=int, default=10, help="BM25 passages per query")
    parser.add_argument("--seed", type=int, default=15)
    parser.add_argument("--skip-floor", action="store_true", help="calibration only")
    parser.add_argument("--skip-calibration", action="store_true", help="floor table only")
    parser.add_argument(
        "--keep", type=int, default=100, help="BM25 passages reranked per dev question"
    )
    args = parser.parse_args(argv)
    local = LocalReranker()
    if not args.skip_calibration:
        calibrate(local, args.queries, args.depth, args.seed)
    if not args.skip_floor:
        floor_table(local, args.keep)


def calibrate(local: LocalReranker, queries: int, depth: int, seed: int) -> None:
    corpus = Corpus(load_corpus())
    train = sorted(load_qrels("train"))
    query_ids = random.Random(seed).sample(train, min(queries, len(train)))
    features, labels = scifact_features(corpus, local, query_ids, depth)
    lexical = fit_logistic(features[:, 1:], labels)
    fused = fit_logistic(features, labels)
    print(
        f"## Calibration: SciFact train, {len(query_ids)} queries x BM25 top {depth} "
        f"= {len(labels)} passages, {int(labels.sum())} relevant\n"
    )
    print("| estimate | weights | bias | AUC | mean relevance: relevant / not |")
    print("|---|---|---|---|---|")
    for name, model, columns in (
        ("LEXICAL (coverage)", lexical, features[:, 1:]),
        ("LOCAL (cosine, coverage)", fused, features),
        ("LEXICAL as shipped", LEXICAL, features[:, 1:]),
        ("LOCAL as shipped", LOCAL, features),
    ):
        values = [model(*row) for row in columns.tolist()]
        good = statistics.fmean(v for v, y in zip(values, labels, strict=True) if y)
        bad = statistics.fmean(v for v, y in zip(values, labels, strict=True) if not y)
        print(
            f"| {name} | {model.weights} | {model.bias} | {auc(values, labels.tolist()):.3f} "
            f"| {good:.2f} / {bad:.2f} |"
        )
    print(
        "\n| passages with | share relevant (precision) | passages | relevant ones kept |\n"
        "|---|---:|---:|---:|"
    )
    for column, name, thresholds in (
        (0, "cosine", (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75)),
        (1, "coverage", (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)),
    ):
        for threshold in thresholds:
            kept = features[:, column] >= threshold
            if kept.any():
                print(
                    f"| {name} >= {threshold} | {labels[kept].mean():.2f} | {int(kept.sum())} "
                    f"| {labels[kept].sum() / labels.sum():.2f} |"
                )


def floor_table(local: LocalReranker, keep: int) -> None:
    questions = load_questions(fold="tuning")
    documents = load_documents()
    index = ChunkIndex()
    index.add(documents)
    refs = [doc.ref for doc in documents]
    indexed = index.documents(refs)
    matrices = [doc.terms for doc in indexed]
    candidates: set[tuple[str, str]] = set()
    for question in questions:  # the passages the searches below will rerank
        _, ids, unknown = index.query_terms(question.question, indexed)
        for entry in shortlist(ids, matrices, keep=keep, unknown_terms=unknown).entries:
            candidates.add(indexed[entry.document].reader_passage(entry.ordinal))
    warm_vectors(local, candidates, "corpus-dev")
    best: dict[str, list[tuple[float, bool]]] = {"local": [], "none": []}
    for reranker in (local, NoReranker()):
        for question in questions:
            result = search(
                index, question.question, refs, reranker=reranker, rerank_timeout=120, keep=keep
            )
            top = max((hit.relevance for hit in result.hits), default=0.0)
            best[reranker.name].append((top, question.document is not None))
    print(
        f"\n## Evidence floor: development set, tuning fold, {len(questions)} questions, "
        f"BM25 top {keep} reranked\n"
    )
    print("| floor | local: unanswerable flagged | local: answerable flagged "
          "| none: unanswerable flagged | none: answerable flagged |")  # fmt: skip
    print("|---|---|---|---|---|")
    for floor in [round(0.05 * step, 2) for step in range(2, 19)]:
        cells = []
        for name in ("local", "none"):
            absent = [top < floor for top, answerable in best[name] if not answerable]
            present = [top < floor for top, answerable in best[name] if answerable]
            cells += [f"{statistics.fmean(absent):.2f}", f"{statistics.fmean(present):.2f}"]
        mark = " (shipped)" if abs(floor - EVIDENCE_FLOOR) < 1e-9 else ""
        print(f"| {floor:.2f}{mark} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
