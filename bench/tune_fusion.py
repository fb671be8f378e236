"""Choose how the local reranker combines BM25 with MiniLM cosine, on TRAINING data only.

Two kinds of question, because the fusion once tuned on SciFact abstracts alone pulled a
neighbouring passage above the answering page of long documents (#25):

* the page-level development set's **tuning** fold (``bench/data/corpus_dev.jsonl``,
  answerable questions, every dev document searched at once): page hit@1 and hit@3;
* SciFact's **train** split (``qrels/train.tsv``): nDCG@10 over documents.

The test fold and SciFact test are never read. For each question BM25's top ``--keep``
passages (the real shortlist over the real chunks and tokenizer) are reordered by each
method of :data:`METHODS` over a grid of its parameters:

* ``linear``: ``w * minmax(bm25) + (1 - w) * minmax(cosine)`` (what shipped, w = 0.35);
  a high ``w`` lets the embedding reorder only near-ties of BM25;
* ``rrf``: reciprocal rank fusion with constant ``k``;
* ``agreement``: linear with a per-query weight from how much the two agree: with
  ``a`` the share of BM25's top 5 that the cosine's top 5 holds,
  ``w = a * w_agree + (1 - a) * w_disagree``;
* ``zscore``: linear over z-scores instead of min-max.

``--pipeline`` scores the fusion the way it ships instead of in simulation: every question of
the tuning fold (and ``--scifact-queries`` SciFact train queries) through
:func:`retrieval.pipeline.search` with ``LocalReranker(bm25_weight=w, bm25_anchor=a)``, near-copy
folding, demotion and document-level sections included, for each ``--weights`` w with and
without the anchor (:data:`retrieval.rerankers.local.BM25_ANCHOR`), and BM25 alone; it also
counts the questions BM25 alone has in its top 3 that the fusion loses::

    .venv/bin/python -m bench.tune_fusion --pipeline --vectors /tmp/scifact-minilm-256.npz

The objective is the mean of dev hit@3, dev hit@1 and SciFact nDCG@10 (each of the three
counts the same). Model selection is cross-validated: questions of both sets are split into
five folds; for each method the best parameters on four folds are scored on the fifth, so
the cross-validated row says how well choosing within that method generalises; the
parameters finally adopted are the method's best on all the training data. From the
repository root::

    .venv/bin/python -m bench.tune_fusion --keep 30 --vectors /tmp/scifact-minilm-256.npz
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from bench.corpus_dev import load_documents, load_questions, warm_vectors
from bench.quality import (
    RERANK_TIMEOUT,
    Corpus,
    candidate_passages,
    dev_searches,
    load_corpus,
    load_qrels,
    load_queries,
    ndcg_at,
    warm_local,
)
from retrieval.evaluation import CUTOFFS, outcome, score
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.base import Reranker
from retrieval.rerankers.local import BM25_ANCHOR, LocalReranker
from retrieval.rerankers.none import NoReranker
from retrieval.shortlist import shortlist

Floats = npt.NDArray[np.float64]
Params = tuple[float, ...]
FOLDS = 5


class DevQuestion(NamedTuple):
    bm25: Floats
    cosine: Floats
    right: npt.NDArray[np.bool_]
    """Per candidate: from the right document and touching a right page."""


class SciFactQuery(NamedTuple):
    bm25: Floats
    cosine: Floats
    documents: list[str]
    """Per candidate, its abstract's id."""
    qrels: dict[str, int]


def _minmax(values: Floats) -> Floats:
    span = values.max() - values.min() if len(values) else 0.0
    return (values - values.min()) / span if span > 0 else np.zeros_like(values)


def _z(values: Floats) -> Floats:
    spread = values.std() if len(values) else 0.0
    return (values - values.mean()) / spread if spread > 0 else np.zeros_like(values)


def _ranks(values: Floats) -> Floats:
    order = np.lexsort((np.arange(len(values)), -values))
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    return ranks


def agreement(bm25: Floats, cosine: Floats, top: int = 5) -> float:
    """The share of BM25's ``top`` best candidates that the cosine's ``top`` best hold."""
    if len(bm25) == 0:
        return 1.0
    first = set(np.lexsort((np.arange(len(bm25)), -bm25))[:top].tolist())
    second = set(np.lexsort((np.arange(len(cosine)), -cosine))[:top].tolist())
    return len(first & second) / min(top, len(bm25))


def _linear(bm25: Floats, cosine: Floats, p: Params) -> Floats:
    return p[0] * _minmax(bm25) + (1 - p[0]) * _minmax(cosine)


def _rrf(bm25: Floats, cosine: Floats, p: Params) -> Floats:
    return 1 / (p[0] + _ranks(bm25)) + 1 / (p[0] + _ranks(cosine))


def _agreement(bm25: Floats, cosine: Floats, p: Params) -> Floats:
    share = agreement(bm25, cosine)
    weight = share * p[0] + (1 - share) * p[1]
    return weight * _minmax(bm25) + (1 - weight) * _minmax(cosine)


def _zscore(bm25: Floats, cosine: Floats, p: Params) -> Floats:
    return p[0] * _z(bm25) + (1 - p[0]) * _z(cosine)


_WEIGHTS = tuple(round(0.05 * step, 2) for step in range(21))
METHODS: dict[str, tuple[Callable[[Floats, Floats, Params], Floats], list[Params]]] = {
    "linear": (_linear, [(w,) for w in _WEIGHTS]),
    "rrf": (_rrf, [(k,) for k in (1.0, 5.0, 10.0, 20.0, 60.0)]),
    "agreement": (
        _agreement,
        [(a, d) for a, d in itertools.product(_WEIGHTS[::2], _WEIGHTS[::2])],
    ),
    "zscore": (_zscore, [(w,) for w in _WEIGHTS]),
}


class Scores(NamedTuple):
    hit1: float
    hit3: float
    ndcg: float

    @property
    def objective(self) -> float:
        return (self.hit1 + self.hit3 + self.ndcg) / 3


def _order(scores: Floats, bm25: Floats) -> npt.NDArray[np.int64]:
    return np.lexsort((np.arange(len(scores)), -bm25, -scores))


def evaluate(
    fuse: Callable[[Floats, Floats, Params], Floats] | None,
    params: Params,
    dev: Sequence[DevQuestion],
    scifact: Sequence[SciFactQuery],
) -> Scores:
    """hit@1 / hit@3 on ``dev`` and nDCG@10 on ``scifact``; ``fuse=None`` is BM25 alone."""
    ones, threes = [], []
    for question in dev:
        scores = question.bm25 if fuse is None else fuse(question.bm25, question.cosine, params)
        right = question.right[_order(scores, question.bm25)]
        ones.append(bool(right[:1].any()))
        threes.append(bool(right[:3].any()))
    gains = []
    for query in scifact:
        scores = query.bm25 if fuse is None else fuse(query.bm25, query.cosine, params)
        ranked = [query.documents[n] for n in _order(scores, query.bm25)]
        gains.append(ndcg_at(list(dict.fromkeys(ranked)), query.qrels))
    mean = statistics.fmean
    return Scores(mean(ones) if ones else 0.0, mean(threes) if threes else 0.0, mean(gains))


def dev_questions(local: LocalReranker, keep: int) -> tuple[list[DevQuestion], int]:
    """The tuning fold's answerable questions, with BM25's top ``keep`` candidates each."""
    documents = load_documents()
    index = ChunkIndex()
    indexed = index.documents([doc.ref for doc in documents], add=documents)
    matrices = [doc.terms for doc in indexed]
    questions = [q for q in load_questions(fold="tuning") if q.document is not None]
    picked = []
    for question in questions:
        _, ids, unknown = index.query_terms(question.question, indexed)
        picked.append(shortlist(ids, matrices, keep=keep, unknown_terms=unknown).entries)
    passages = {
        indexed[e.document].reader_passage(e.ordinal) for entries in picked for e in entries
    }
    embedded = warm_vectors(local, passages, "corpus-dev")
    embedder = local.load()
    assert embedder is not None, local.load_error
    found = []
    for question, entries in zip(questions, picked, strict=True):
        keys = [indexed[e.document].reader_keys[e.ordinal] for e in entries]
        vectors = local.cache.get_many(local.model_id, keys)
        query_vector = embedder.embed([question.question])[0]
        right = []
        for entry in entries:
            first, last = indexed[entry.document].chunks[entry.ordinal].pages
            right.append(
                indexed[entry.document].ref.id == question.document
                and any(first <= page <= last for page in question.pages)
            )
        found.append(
            DevQuestion(
                np.array([e.bm25 for e in entries]),
                np.array([float(np.dot(query_vector, vectors[key])) for key in keys]),
                np.array(right, dtype=bool),
            )
        )
    return found, embedded


def scifact_queries(local: LocalReranker, keep: int, vectors: Path | None) -> list[SciFactQuery]:
    corpus = Corpus(load_corpus())
    print(f"SciFact vectors: {warm_local(local, corpus, vectors)}")
    queries, qrels = load_queries(), load_qrels("train")
    embedder = local.load()
    assert embedder is not None, local.load_error
    found = []
    for q in [q for q in qrels if q in queries]:
        scores = corpus.bm25(queries[q])
        positions = corpus.top(scores, keep)
        keys = [corpus.passages[i][0] for i in positions]
        cached = local.cache.get_many(local.model_id, keys)
        query_vector = embedder.embed([queries[q]])[0]
        found.append(
            SciFactQuery(
                np.array([float(scores[i]) for i in positions]),
                np.array([float(np.dot(query_vector, cached[key])) for key in keys]),
                [corpus.chunks[i].document_id for i in positions],
                qrels[q],
            )
        )
    return found


def _folds(count: int, seed: int) -> list[int]:
    labels = [n % FOLDS for n in range(count)]
    random.Random(seed).shuffle(labels)
    return labels


def pipeline_table(weights: Sequence[float], scifact_queries: int, vectors: Path | None) -> None:
    """The tuning fold (and SciFact train) through the real pipeline, per weight and anchor."""
    questions = load_questions(fold="tuning")
    documents = load_documents()
    index = ChunkIndex()
    index.add(documents)
    refs = [doc.ref for doc in documents]
    shared = LocalReranker()
    warm_vectors(shared, candidate_passages(index, refs, questions), "corpus-dev")
    corpus = Corpus(load_corpus()) if scifact_queries else None
    queries, qrels = load_queries(), load_qrels("train")
    train = [q for q in qrels if q in queries][:scifact_queries]
    if corpus is not None:
        print(f"SciFact vectors: {warm_local(shared, corpus, vectors)}")
    systems: list[tuple[str, Reranker]] = [("BM25 alone", NoReranker())]
    for weight in weights:
        for anchor in (0, BM25_ANCHOR):
            local = LocalReranker(bm25_weight=weight, bm25_anchor=anchor)
            local.cache = shared.cache  # the same vectors, embedded once
            systems.append((f"linear {weight:.2f}, anchor {anchor}", local))
    print(
        f"\n## Through the pipeline: {sum(q.document is not None for q in questions)} answerable "
        f"and {sum(q.document is None for q in questions)} unanswerable questions of the tuning "
        f"fold, {len(train)} SciFact train queries\n"
    )
    print("| fusion | dev hit@1 / @3 / @10 | answerable flagged | unanswerable flagged "
          "| BM25's top 3 lost | SciFact train nDCG@10 |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|")
    baseline: dict[str, bool] = {}
    for name, reranker in systems:
        results = dev_searches(index, refs, questions, reranker)
        outcomes = [
            outcome(question.labelled, result)
            for question, result in zip(questions, results, strict=True)
        ]
        if not baseline:
            baseline = {o.question.question: o.hit(3) for o in outcomes}
        lost = sum(baseline[o.question.question] and not o.hit(3) for o in outcomes)
        gains = []
        for q in train:
            assert corpus is not None
            result = search(
                corpus.index, queries[q], corpus.refs, reranker=reranker,
                top_k=10, rerank_timeout=RERANK_TIMEOUT,
            )  # fmt: skip
            ranked = list(dict.fromkeys(hit.document_id for hit in result.hits))
            gains.append(ndcg_at(ranked, qrels[q]))
        scored = score(outcomes)
        hits = " / ".join(f"{scored.hit_at[k]:.3f}" for k in CUTOFFS)
        ndcg = f"{statistics.fmean(gains):.3f}" if gains else "–"
        print(f"| {name} | {hits} | {scored.false_flags:.3f} | {scored.unanswerable_flagged:.2f} "
              f"| {lost} | {ndcg} |")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Tune BM25 + cosine fusion on training data")
    parser.add_argument("--keep", type=int, default=30, help="BM25 passages reordered")
    parser.add_argument("--vectors", type=Path, help="bench-only SciFact vector file (npz)")
    parser.add_argument("--seed", type=int, default=25)
    parser.add_argument(
        "--pipeline", action="store_true", help="score the shipped fusion through `search`"
    )
    parser.add_argument("--weights", type=float, nargs="+", default=[0.4, 0.5, 0.6, 0.7])
    parser.add_argument(
        "--scifact-queries", type=int, default=200, help="SciFact train queries (--pipeline)"
    )
    args = parser.parse_args(argv)
    started = time.monotonic()
    if args.pipeline:
        pipeline_table(args.weights, args.scifact_queries, args.vectors)
        print(
            f"\n{time.monotonic() - started:.0f} s; load average "
            f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}; {time.strftime('%Y-%m-%d %H:%M')}."
        )
        return
    local = LocalReranker()
    dev, embedded = dev_questions(local, args.keep)
    scifact = scifact_queries(local, args.keep, args.vectors)
    print(
        f"\n## Fusion on training data: {len(dev)} dev questions (tuning fold), "
        f"{len(scifact)} SciFact train queries, BM25 top {args.keep}, MiniLM at "
        f"{local.max_tokens} word pieces ({embedded} dev passages embedded now)\n"
    )
    bm25 = evaluate(None, (), dev, scifact)
    print("| method | parameters | dev hit@1 | dev hit@3 | SciFact nDCG@10 | objective |")
    print("|---|---|---:|---:|---:|---:|")
    print(f"| BM25 alone | | {bm25.hit1:.3f} | {bm25.hit3:.3f} | {bm25.ndcg:.3f} | "
          f"{bm25.objective:.3f} |")  # fmt: skip
    best: dict[str, tuple[Params, Scores]] = {}
    for name, (fuse, grid) in METHODS.items():
        table = {params: evaluate(fuse, params, dev, scifact) for params in grid}
        chosen = max(table, key=lambda p: table[p].objective)
        best[name] = (chosen, table[chosen])
        shown = grid if len(grid) <= 21 else [chosen]
        for params in shown:
            s = table[params]
            mark = " **best**" if params == chosen else ""
            print(f"| {name} | {params}{mark} | {s.hit1:.3f} | {s.hit3:.3f} | {s.ndcg:.3f} | "
                  f"{s.objective:.3f} |")  # fmt: skip

    dev_folds, scifact_folds = _folds(len(dev), args.seed), _folds(len(scifact), args.seed + 1)
    print(f"\n## Cross-validated ({FOLDS} folds): each method's best parameters on four "
          "folds, scored on the fifth\n")  # fmt: skip
    print("| method | dev hit@1 | dev hit@3 | SciFact nDCG@10 | objective | chosen per fold |")
    print("|---|---:|---:|---:|---:|---|")
    candidates: list[
        tuple[str, tuple[Callable[[Floats, Floats, Params], Floats] | None, list[Params]]]
    ] = [
        ("BM25 alone", (None, [()])),
        *METHODS.items(),
    ]
    for name, (fusion, grid) in candidates:
        held: list[Scores] = []
        picks = []
        for fold in range(FOLDS):
            train_dev = [q for q, f in zip(dev, dev_folds, strict=True) if f != fold]
            train_sf = [q for q, f in zip(scifact, scifact_folds, strict=True) if f != fold]
            test_dev = [q for q, f in zip(dev, dev_folds, strict=True) if f == fold]
            test_sf = [q for q, f in zip(scifact, scifact_folds, strict=True) if f == fold]
            chosen = max(grid, key=lambda p: evaluate(fusion, p, train_dev, train_sf).objective)
            picks.append(chosen)
            held.append(evaluate(fusion, chosen, test_dev, test_sf))
        mean = Scores(*(statistics.fmean(getattr(s, f) for s in held) for f in Scores._fields))
        print(f"| {name} | {mean.hit1:.3f} | {mean.hit3:.3f} | {mean.ndcg:.3f} | "
              f"{mean.objective:.3f} | {', '.join(map(str, picks))} |")  # fmt: skip
    print(f"\nIn-sample best per method: {best}")
    print(f"{time.monotonic() - started:.0f} s. Command: `.venv/bin/python -m bench.tune_fusion "
          f"--keep {args.keep}" + (f" --vectors {args.vectors}`" if args.vectors else "`"))  # fmt: skip


if __name__ == "__main__":
    main()
