"""Passages in another language than the question's: where they go, and what that costs.

The local reranker's multilingual vectors (:mod:`retrieval.rerankers.cross_lingual`) find the
passages of the searched documents written in another language than the question's; a search
puts those that stand ``margin`` above the median of such passages at ``place`` in its results.
This sweeps both through the real pipeline (:func:`retrieval.pipeline.search`, every candidate
scored) over the development set's documents, on one fold, against the same reranker without
them (``off``): page hit@1 / @3 / @10 of the answerable questions, the verdict's flags, and the
questions about a document not in the question's language (``across``: a non-English document
asked in English, the Spanish form asked in English, and so on).

Tune on ``--fold tuning``; report ``--fold test`` once, with the chosen values only::

    .venv/bin/python -m bench.cross_lingual --fold tuning
    .venv/bin/python -m bench.cross_lingual --fold test --margins 0.08 --places 2

The first run embeds the passages of the documents not in English with e5 (about 30 CPU s per
100; the dev set has about 550) and keeps the vectors under ``$SHORTLIST_BENCH_CACHE``.
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Sequence

from bench.corpus_dev import (
    Fold,
    Question,
    load_documents,
    load_questions,
    warm_multilingual,
    warm_vectors,
)
from bench.quality import candidate_passages, dev_searches
from retrieval.evaluation import Outcome, outcome, score
from retrieval.index import ChunkIndex
from retrieval.language import detect_language
from retrieval.rerankers.base import CROSS_LINGUAL_MARGIN, CROSS_LINGUAL_PLACE
from retrieval.rerankers.local import LocalReranker


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def across(questions: Sequence[Question], written: dict[str, str]) -> set[str]:
    """The answerable questions whose document is written in another language than they are
    (each side as :func:`retrieval.language.detect_language` reads it, English when undecided)."""
    return {
        q.question
        for q in questions
        if q.document is not None
        and written[q.document] != (detect_language(q.question) or "english")
    }


def _cells(outcomes: Sequence[Outcome], crossing: set[str]) -> str:
    scores = score(outcomes)
    hits = " / ".join(f"{scores.hit_at[k]:.3f}" for k in (1, 3, 10))
    crossed = [o for o in outcomes if o.question.question in crossing]
    at3 = sum(o.hit(3) for o in crossed)
    return (
        f"{hits} | {scores.false_flags:.3f} | {scores.unanswerable_flagged:.2f} | "
        f"{at3} of {len(crossed)}"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="passages across languages: margin and place")
    parser.add_argument("--fold", choices=("tuning", "test"), default="tuning")
    parser.add_argument("--margins", type=float, nargs="+", default=[0.06, 0.07, 0.08, 0.09, 0.10])
    parser.add_argument("--places", type=int, nargs="+", default=[1, 2, 3])
    args = parser.parse_args(argv)
    fold: Fold = args.fold
    questions = load_questions(fold=fold)
    documents = load_documents()
    index = ChunkIndex()
    index.add(documents)
    refs = [doc.ref for doc in documents]
    written = {doc.id: index.written_language(doc.markdown) for doc in documents}
    crossing = across(questions, written)
    local = LocalReranker()
    started, cpu = time.monotonic(), _cpu()
    warm_vectors(local, candidate_passages(index, refs, load_questions()), "corpus-dev")
    passages = [passage for ref in refs for passage in index.reader_passages(ref)]
    foreign = [passage for ref in refs for passage in index.other_language_passages(ref)]
    embedded = warm_multilingual(local, foreign, "corpus-dev")
    warm_wall, warm_cpu = time.monotonic() - started, _cpu() - cpu
    answerable = sum(q.document is not None for q in questions)
    print(
        f"## Passages across languages, fold {fold}: {answerable} answerable and "
        f"{len(questions) - answerable} unanswerable questions ({len(crossing)} about a document "
        f"in another language) over {len(documents)} documents, {len(passages)} passages, "
        f"{len(foreign)} in documents not in English ({embedded} embedded now: {warm_cpu:.0f} CPU-s, "
        f"{warm_wall:.0f} s wall)\n"
    )
    print(
        "| margin | place | hit@1 / @3 / @10 | answerable flagged | unanswerable flagged | across: hit@3 |"
    )
    print("|---|---|---|---|---|---|")  # fmt: skip
    settings = [(float("inf"), CROSS_LINGUAL_PLACE)] + [
        (margin, place) for margin in args.margins for place in args.places
    ]
    searched_cpu = 0.0
    for margin, place in settings:
        local.cross_lingual_margin, local.cross_lingual_place = margin, place
        cpu = _cpu()
        results = dev_searches(index, refs, questions, local)
        searched_cpu += _cpu() - cpu
        outcomes = [outcome(q.labelled, r) for q, r in zip(questions, results, strict=True)]
        label = "off | –" if margin == float("inf") else f"{margin:.2f} | {place}"
        chosen = (
            " (default)" if (margin, place) == (CROSS_LINGUAL_MARGIN, CROSS_LINGUAL_PLACE) else ""
        )
        print(f"| {label}{chosen} | {_cells(outcomes, crossing)} |")
    print(
        f"\nSearches: {searched_cpu / len(settings):.1f} CPU-s a sweep row of {len(questions)} "
        f"questions; load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\n"
        f"Command: `.venv/bin/python -m bench.cross_lingual --fold {fold} --margins "
        f"{' '.join(map(str, args.margins))} --places {' '.join(map(str, args.places))}`"
    )


if __name__ == "__main__":
    main()
