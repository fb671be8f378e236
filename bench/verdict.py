"""The verdict ``insufficient_evidence``: its floor, and whether more features would pay (#25).

Every question of one fold of the development set (:mod:`bench.corpus_dev`) is searched
over all 46 documents through :func:`retrieval.pipeline.search`, with BM25 alone and with
the local reranker (the default), every candidate scored. The script prints:

1. **the floor table**: for floors on the best shown relevance (the verdict's one
   signal), the share of answerable questions wrongly flagged and of unanswerable ones
   rightly flagged, per reranker; and the floor the rule picks: the highest that
   flags at most 5 % of the answerable questions, halfway between the answerable
   question it spares and the one below it. ``retrieval/relevance.py`` shifts each
   calibration's bias by ``-logit(floor)`` so that the floor is 0.5 whichever reranker ran.
   Run on the tuning fold to fit; on the test fold to report (the floor table then reads
   the shipped relevance, so the 0.50 row is the verdict as shipped).
2. **the features** the verdict could use besides the best relevance, each with its AUC
   for "this question is unanswerable": the best passage's query-term coverage, the share
   of the query's idf weight that no searched passage holds, the best embedding cosine,
   whether BM25's and the embedding's first passages agree on the document, how many of
   the first five hits share the first hit's document, the share of the query's idf weight
   absent from the first hit's whole document (``absent``); and for combinations of them a
   balanced logistic regression, 10-fold cross-validated within the fold (20 shuffles),
   its threshold set on each training part to flag at most 5 % of its answerable
   questions: the held-out shares it flags.

From the repository root::

    .venv/bin/python -m bench.verdict --fold tuning     # fit (in-sample for the floor)
    .venv/bin/python -m bench.verdict --fold test       # report
"""

from __future__ import annotations

import argparse
import math
import os
import time
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from bench.corpus_dev import Fold, Question, load_documents, load_questions, warm_vectors
from bench.quality import candidate_passages, dev_searches
from bench.tune_relevance import auc, logistic_weights
from retrieval.index import ChunkIndex, IndexedDocument
from retrieval.rerankers.base import Reranker
from retrieval.rerankers.local import LocalReranker
from retrieval.rerankers.none import NoReranker
from retrieval.shortlist import DEFAULT_KEEP, lucene_idf, shortlist
from retrieval.types import SearchResult

FloatArray = npt.NDArray[np.float64]
FALSE_FLAGS = 0.05
"""The most answerable questions the verdict may flag (#25)."""
FEATURES = ("relevance", "coverage", "missing", "cosine", "agree", "focus", "absent")
COMBINATIONS = (
    ("relevance",),
    ("relevance", "coverage"),
    ("relevance", "missing"),
    ("relevance", "cosine"),
    ("relevance", "agree"),
    ("relevance", "focus"),
    ("cosine", "coverage"),
    ("relevance", "missing", "agree"),
    ("relevance", "absent"),
    ("relevance", "absent", "coverage"),
    ("relevance", "coverage", "missing", "cosine", "agree", "focus"),
)


class Searched(NamedTuple):
    question: Question
    result: SearchResult
    features: dict[str, float]


def best_relevance(result: SearchResult) -> float:
    return max((hit.relevance for hit in result.hits), default=0.0)


def features(
    index: ChunkIndex,
    indexed: Sequence[IndexedDocument],
    local: LocalReranker,
    question: str,
    result: SearchResult,
) -> dict[str, float]:
    """The candidate features of one searched question (see the module docstring)."""
    matrices = [doc.terms for doc in indexed]
    total = sum(matrix.chunk_count for matrix in matrices)
    _, ids, unknown = index.query_terms(question, indexed)
    picked = shortlist(ids, matrices, keep=DEFAULT_KEEP, unknown_terms=unknown)
    entries = picked.entries
    absent = lucene_idf(0, total)
    terms = sorted(set(ids))
    idfs = []
    for term in terms:
        df = 0
        for matrix in matrices:
            span = matrix.span(term)
            df += 0 if span is None else span[1] - span[0]
        idfs.append(lucene_idf(df, total))
    whole = sum(idfs) + unknown * absent
    missing = (unknown * absent + sum(v for v in idfs if v == absent)) / whole if whole else 1.0
    embedder = local.load()
    assert embedder is not None
    query_vector = embedder.embed([question])[0]
    keys = [indexed[entry.document].reader_passage(entry.ordinal)[0] for entry in entries]
    vectors = local.cache.get_many(local.model_id, keys)
    cosine = [float(query_vector @ vectors[key]) if key in vectors else -1.0 for key in keys]
    closest = int(np.argmax(cosine)) if cosine else 0
    hits = result.hits
    first = next((doc for doc in indexed if hits and doc.ref.id == hits[0].document_id), None)
    outside = unknown * absent + sum(
        idf
        for term, idf in zip(terms, idfs, strict=True)
        if first is None or first.terms.span(term) is None
    )
    return {
        "relevance": best_relevance(result),
        "coverage": max((entry.coverage for entry in entries), default=0.0),
        "missing": missing,
        "cosine": max(cosine, default=0.0),
        "agree": float(bool(entries) and entries[closest].document == entries[0].document),
        "focus": sum(hit.document_id == hits[0].document_id for hit in hits[:5]) / 5
        if hits
        else 0.0,
        "absent": outside / whole if whole else 1.0,
    }


def run(fold: Fold) -> dict[str, list[Searched]]:
    questions = load_questions(fold=fold)
    documents = load_documents()
    index = ChunkIndex()
    index.add(documents)
    refs = [doc.ref for doc in documents]
    indexed = index.documents(refs)
    local = LocalReranker()
    warm_vectors(local, candidate_passages(index, refs, load_questions()), "corpus-dev")
    systems: dict[str, list[Searched]] = {}
    rerankers: tuple[Reranker, ...] = (NoReranker(), local)
    for reranker in rerankers:
        name = "BM25" if reranker.name == "none" else f"BM25 + {reranker.name}"
        results = dev_searches(index, refs, questions, reranker)
        systems[name] = [
            Searched(question, result, features(index, indexed, local, question.question, result))
            for question, result in zip(questions, results, strict=True)
        ]
    return systems


def chosen_floor(answerable: Sequence[float]) -> float:
    """The highest floor that flags at most :data:`FALSE_FLAGS` of ``answerable`` (best
    relevances), halfway between the one it spares and the highest one it flags."""
    ordered = sorted(answerable)
    flagged = math.floor(FALSE_FLAGS * len(ordered))
    if flagged == 0:
        return ordered[0] / 2
    return (ordered[flagged - 1] + ordered[flagged]) / 2


def floor_table(systems: dict[str, list[Searched]]) -> None:
    print("| floor | " + " | ".join(f"{n}: answerable flagged | unanswerable" for n in systems))
    print("|---:|" + "---:|---:|" * len(systems))
    for floor in (0.3, 0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.79):
        cells = []
        for searched in systems.values():
            answerable = [best_relevance(s.result) for s in searched if s.question.document]
            unanswerable = [best_relevance(s.result) for s in searched if not s.question.document]
            cells.append(f"{sum(v < floor for v in answerable) / len(answerable):.3f}")
            cells.append(f"{sum(v < floor for v in unanswerable) / len(unanswerable):.2f}")
        print(f"| {floor:.2f} | " + " | ".join(cells) + " |")
    for name, searched in systems.items():
        answerable = [best_relevance(s.result) for s in searched if s.question.document]
        unanswerable = [best_relevance(s.result) for s in searched if not s.question.document]
        floor = chosen_floor(answerable)
        ff = sum(v < floor for v in answerable) / len(answerable)
        uf = sum(v < floor for v in unanswerable) / len(unanswerable)
        shift = -math.log(floor / (1 - floor))
        print(
            f"\n{name}: the rule's floor {floor:.3f} (bias shift {shift:+.2f} puts it at 0.5): "
            f"answerable flagged {ff:.3f}, unanswerable flagged {uf:.2f}; as the verdict "
            f"stands: {sum(s.result.insufficient_evidence for s in searched if s.question.document) / len(answerable):.3f} / "
            f"{sum(s.result.insufficient_evidence for s in searched if not s.question.document) / len(unanswerable):.2f}"
        )


def _fit(train: FloatArray, labels: FloatArray, l2: float = 1e-2) -> tuple[FloatArray, ...]:
    """Balanced logistic regression on standardised features: (mean, sd, weights)."""
    mean, sd = train.mean(0), train.std(0) + 1e-9
    beta = logistic_weights((train - mean) / sd, labels, l2=l2, iterations=100, tolerance=1e-9)
    return mean, sd, beta


def _score(model: tuple[FloatArray, ...], rows: FloatArray) -> FloatArray:
    mean, sd, beta = model
    return np.asarray(np.hstack([(rows - mean) / sd, np.ones((len(rows), 1))]) @ beta)


def cross_validated(x: FloatArray, labels: FloatArray, shuffles: int = 20) -> tuple[float, float]:
    """Held-out (answerable flagged, unanswerable flagged), 10 folds, ``shuffles`` times."""
    shares = []
    for seed in range(shuffles):
        order = np.random.default_rng(seed).permutation(len(labels))
        flags = np.zeros(len(labels), dtype=bool)
        for k in range(10):
            held = order[k::10]
            train = np.setdiff1d(order, held)
            model = _fit(x[train], labels[train])
            trained = _score(model, x[train])[labels[train] == 0]
            ranked = np.sort(trained)
            spared = len(ranked) - math.floor(FALSE_FLAGS * len(ranked)) - 1
            flags[held] = _score(model, x[held]) > ranked[spared]
        shares.append((flags[labels == 0].mean(), flags[labels == 1].mean()))
    ff, uf = np.mean(shares, axis=0)
    return float(ff), float(uf)


def feature_table(searched: Sequence[Searched]) -> None:
    labels = np.array([float(s.question.document is None) for s in searched])
    x = np.array([[s.features[name] for name in FEATURES] for s in searched], dtype=np.float64)
    print("\n| feature | AUC for unanswerable (low value -> unanswerable) |")
    print("|---|---:|")
    for column, name in enumerate(FEATURES):
        sign = 1.0 if name in ("missing", "absent") else -1.0
        print(f"| {name} | {auc(list(sign * x[:, column]), list(labels)):.3f} |")
    print("\n| features (logistic, cross-validated) | answerable flagged | unanswerable flagged |")
    print("|---|---:|---:|")
    for combination in COMBINATIONS:
        columns = [FEATURES.index(name) for name in combination]
        ff, uf = cross_validated(x[:, columns], labels)
        print(f"| {', '.join(combination)} | {ff:.3f} | {uf:.2f} |")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="The verdict's floor and features")
    parser.add_argument("--fold", choices=("tuning", "test"), default="tuning")
    args = parser.parse_args(argv)
    started = time.monotonic()
    systems = run(args.fold)
    searched = next(iter(systems.values()))
    answerable = sum(s.question.document is not None for s in searched)
    print(
        f"## The verdict on the {args.fold} fold: {answerable} answerable, "
        f"{len(searched) - answerable} unanswerable questions\n"
    )
    floor_table(systems)
    feature_table(systems["BM25 + local"])
    print(
        f"\n{time.monotonic() - started:.0f} s wall; load average "
        f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}; {time.strftime('%Y-%m-%d %H:%M')}.\n"
        f"Command: `.venv/bin/python -m bench.verdict --fold {args.fold}`"
    )


if __name__ == "__main__":
    main()
