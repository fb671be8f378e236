"""Passages in another language than the question's: where they go, and what that costs.

The local reranker's multilingual vectors (:mod:`retrieval.rerankers.cross_lingual`) find the
passages of the searched documents written in another language than the question's; a search
puts those that stand ``margin`` above the median of such passages at ``place`` in its results,
or, where nothing it finds in the question's language is evidence, those that stand
``--weak-margins`` above it (``–``: none then either). This sweeps them through the real pipeline (:func:`retrieval.pipeline.search`, every candidate
scored) over the development set's documents, on one fold, against the same reranker without
them (``off``): page hit@1 / @3 / @10 of the answerable questions, the verdict's flags, and the
questions about a document not in the question's language (``across``: a non-English document
asked in English, the Spanish form asked in English, and so on).

Tune on ``--fold tuning``; report ``--fold test`` once, with the chosen values only::

    .venv/bin/python -m bench.cross_lingual --fold tuning
    .venv/bin/python -m bench.cross_lingual --fold test --margins 0.08 --weak-margins 0.03 --places 3

``--ranks`` prints, instead of the sweep, for each question about a document in another language
the answering page's rank among the other-language passages the search compares (by e5 alone)
and the best passage's margin; and how many passages of English documents a passage-by-passage
language vote would call another language (why the rule reads a document's language).
``--look-cost`` times, in a project in English alone (SciFact's abstracts), what a search spends
looking for documents in other languages (:func:`retrieval.pipeline.search`'s step, 200 claims).

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
from bench.quality import candidate_passages, dev_searches, load_corpus, load_queries
from retrieval.evaluation import Outcome, outcome, score
from retrieval.index import ChunkIndex
from retrieval.language import detect_language
from retrieval.pipeline import _with_cross_lingual  # the step --look-cost times
from retrieval.rerankers.base import (
    CROSS_LINGUAL_MARGIN,
    CROSS_LINGUAL_MARGIN_WITHOUT_EVIDENCE,
    CROSS_LINGUAL_PLACE,
)
from retrieval.rerankers.local import LocalReranker
from retrieval.types import DocumentRef, Shortlist


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


def ranks(
    index: ChunkIndex,
    refs: Sequence[DocumentRef],
    questions: Sequence[Question],
    local: LocalReranker,
    crossing: set[str],
) -> None:
    """The table of ``--ranks`` (see the module docstring)."""
    assert local.matcher is not None
    indexed = index.documents(refs)
    print("| question | answering page's rank by e5 | best margin |")
    print("|---|---:|---:|")
    for question in questions:
        if question.question not in crossing:
            continue
        asked_in = detect_language(question.question) or index.tokenizer.language
        other = [d for d in indexed if index.in_other_language(d) and d.written_in != asked_in]
        places = [(doc, chunk) for doc in other for chunk in doc.chunks]
        found, _ = local.matcher.matches(
            question.question, [k for doc in other for k in doc.reader_keys], limit=len(places)
        )
        rank = next(
            (
                n
                for n, match in enumerate(found, 1)
                if places[match.position][0].ref.id == question.document
                and set(
                    range(
                        places[match.position][1].pages[0], places[match.position][1].pages[1] + 1
                    )
                )
                & set(question.pages)
            ),
            None,
        )
        margin = f"{found[0].margin:.3f}" if found else "–"
        print(f"| {question.question[:70]} | {rank or '–'} | {margin} |")
    english = [doc for doc in indexed if not index.in_other_language(doc)]
    voted = sum(
        detect_language(doc.reader_text(n)) not in (None, index.tokenizer.language)
        for doc in english
        for n in range(len(doc.chunks))
    )
    print(
        f"\nPassages of the {len(english)} English documents a passage-by-passage vote calls "
        f"another language: {voted}."
    )


def look_cost(claims: int = 200) -> None:
    """The line of ``--look-cost`` (see the module docstring)."""
    corpus = load_corpus()
    index = ChunkIndex()
    indexed = index.documents([doc.ref for doc in corpus], add=corpus)
    local = LocalReranker()
    nothing = Shortlist(entries=[], total=0, exhaustive=True, no_term_matched=False)
    queries = list(load_queries().values())[:claims]
    cpu = _cpu()
    for query in queries:
        _with_cross_lingual(local, index, query, indexed, nothing)
    spent = (_cpu() - cpu) / len(queries)
    other = sum(index.in_other_language(doc) for doc in indexed)
    print(
        f"Looking for documents in other languages: {1000 * spent:.2f} ms CPU a search over "
        f"{len(indexed)} SciFact documents ({other} in another language), {len(queries)} claims; "
        f"load average {os.getloadavg()[0]:.1f}."
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="passages across languages: margin and place")
    parser.add_argument("--fold", choices=("tuning", "test"), default="tuning")
    parser.add_argument("--margins", type=float, nargs="+", default=[0.06, 0.07, 0.08, 0.09, 0.10])
    parser.add_argument(
        "--weak-margins",
        type=float,
        nargs="+",
        default=[CROSS_LINGUAL_MARGIN_WITHOUT_EVIDENCE],
        help="margins enough where nothing in the question's language is evidence",
    )
    parser.add_argument("--places", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--ranks", action="store_true", help="e5 ranks instead of the sweep")
    parser.add_argument("--look-cost", action="store_true", help="time the look, and stop")
    args = parser.parse_args(argv)
    if args.look_cost:
        look_cost()
        return
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
    if args.ranks:
        ranks(index, refs, questions, local, crossing)
        print(f"\nCommand: `.venv/bin/python -m bench.cross_lingual --fold {fold} --ranks`")
        return
    print(
        "| margin | without evidence | place | hit@1 / @3 / @10 | answerable flagged "
        "| unanswerable flagged | across: hit@3 |"
    )
    print("|---|---|---|---|---|---|---|")  # fmt: skip
    off = float("inf")
    default = (CROSS_LINGUAL_MARGIN, CROSS_LINGUAL_MARGIN_WITHOUT_EVIDENCE, CROSS_LINGUAL_PLACE)
    settings = [(off, off, CROSS_LINGUAL_PLACE)] + [
        (margin, weak, place)
        for margin in args.margins
        for weak in args.weak_margins
        for place in args.places
    ]
    searched_cpu = 0.0
    for margin, weak, place in settings:
        local.cross_lingual_margin, local.cross_lingual_place = margin, place
        local.cross_lingual_margin_without_evidence = weak
        cpu = _cpu()
        results = dev_searches(index, refs, questions, local)
        searched_cpu += _cpu() - cpu
        outcomes = [outcome(q.labelled, r) for q, r in zip(questions, results, strict=True)]
        label = (
            "off | – | –"
            if margin == off
            else f"{margin:.2f} | {'–' if weak == off else f'{weak:.2f}'} | {place}"
        )
        chosen = " (default)" if (margin, weak, place) == default else ""
        print(f"| {label}{chosen} | {_cells(outcomes, crossing)} |")
    print(
        f"\nSearches: {searched_cpu / len(settings):.1f} CPU-s a sweep row of {len(questions)} "
        f"questions; load average {' '.join(f'{v:.1f}' for v in os.getloadavg())}; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}.\n"
        f"Command: `.venv/bin/python -m bench.cross_lingual --fold {fold} --margins "
        f"{' '.join(map(str, args.margins))} --weak-margins "
        f"{' '.join(map(str, args.weak_margins))} --places {' '.join(map(str, args.places))}`"
    )


if __name__ == "__main__":
    main()
