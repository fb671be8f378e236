"""Where near-copy passages and distinct passages fall on the shingle-Jaccard scale.

Chooses :data:`retrieval.near_duplicates.NEAR_COPY_JACCARD` from data:

* **near-copies**: every document of the development corpus
  (:mod:`bench.corpus_dev`) against an edited version of itself (one word in
  ``--edit-every`` replaced, a sentence added after every third paragraph, so
  chunk boundaries shift), each passage of the original against its most
  similar passage of the edit; and the same with numbers changed (a template
  sibling: every number different);
* **distinct passages that rank together**: every pair among the top 10
  passages BM25 returns for each development question, every pair of
  neighbouring passages of one document (the parts of a table repeat its
  header), and every pair among the top 10 of 200 SciFact **train** queries.

From the repository root::

    .venv/bin/python -m bench.near_duplicates
"""

from __future__ import annotations

import argparse
import itertools
import random
import re
import time
from collections.abc import Iterable, Sequence

from bench.corpus_dev import load_documents, load_questions
from retrieval.chunking import chunk_markdown
from retrieval.index import ChunkIndex
from retrieval.near_duplicates import jaccard, shingles
from retrieval.shortlist import shortlist

_MIN_WORDS = 20
"""Passages shorter than this (a lone heading, a page number) are left out of the pairs."""
REPORTED = 0.45
"""Pairs of BM25's top 10 at least this similar are listed, to be read by eye."""
_ADDED = "This sentence was added to the revised version of the document for the benchmark."


def edited(markdown: str, *, every: int, seed: int) -> str:
    """``markdown`` with one word in ``every`` replaced and a sentence after every third
    paragraph (page markers and headings untouched)."""
    rng = random.Random(seed)
    out: list[str] = []
    paragraphs = 0
    for line in markdown.split("\n"):
        if line.startswith(("<!--", "#")) or not line.strip():
            out.append(line)
            continue
        words = line.split(" ")
        for i in range(len(words)):
            if rng.randrange(every) == 0:
                words[i] = rng.choice(("revised", "amended", "updated", "changed"))
        out.append(" ".join(words))
        paragraphs += 1
        if paragraphs % 3 == 0 and not line.lstrip().startswith("|"):
            out.append(_ADDED)
    return "\n".join(out)


def renumbered(markdown: str, *, seed: int) -> str:
    """``markdown`` with every number replaced by another of the same length."""
    rng = random.Random(seed)
    return re.sub(
        r"(?<!page )\d+",
        lambda m: "".join(str(rng.randrange(10)) for _ in m.group(0)),
        markdown,
    )


def best_match(originals: Sequence[str], copies: Sequence[str]) -> list[float]:
    """For each long enough original passage, its highest Jaccard with any copy passage."""
    theirs = [shingles(text) for text in copies]
    found = []
    for text in originals:
        if len(text.split()) < _MIN_WORDS:
            continue
        mine = shingles(text)
        found.append(max((jaccard(mine, other) for other in theirs), default=0.0))
    return found


def pairs(texts: Iterable[str]) -> list[float]:
    sets = [shingles(text) for text in texts if len(text.split()) >= _MIN_WORDS]
    return [jaccard(a, b) for a, b in itertools.combinations(sets, 2)]


def describe(name: str, values: Sequence[float], *, low: bool) -> None:
    ordered = sorted(values)
    n = len(ordered)

    def at(share: float) -> float:
        return ordered[min(n - 1, int(share * n))]

    shown = (
        f"min {ordered[0]:.3f}, 1st pct {at(0.01):.3f}, 5th {at(0.05):.3f}, median {at(0.5):.3f}"
        if low
        else f"median {at(0.5):.3f}, 99th pct {at(0.99):.3f}, 99.9th {at(0.999):.3f}, "
        f"max {ordered[-1]:.3f}"
    )
    print(f"| {name} | {n} | {shown} |")


def share_at_least(values: Sequence[float], threshold: float) -> float:
    return sum(value >= threshold for value in values) / len(values)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--edit-every", type=int, default=50)
    parser.add_argument("--scifact-queries", type=int, default=200)
    args = parser.parse_args(argv)
    started = time.process_time()
    documents = load_documents()

    copies: dict[str, list[float]] = {"edited": [], "heavier edit": [], "renumbered": []}
    for n, doc in enumerate(documents):
        original = [c.text for c in chunk_markdown(doc.id, doc.markdown)]
        for name, markdown in (
            ("edited", edited(doc.markdown, every=args.edit_every, seed=n)),
            ("heavier edit", edited(doc.markdown, every=args.edit_every // 2, seed=n)),
            ("renumbered", renumbered(doc.markdown, seed=n)),
        ):
            copy = [c.text for c in chunk_markdown(doc.id + "-v2", markdown)]
            copies[name].extend(best_match(original, copy))

    distinct: dict[str, list[float]] = {"dev top 10 (BM25)": [], "neighbours": []}
    index = ChunkIndex()
    index.add(documents)
    refs = [doc.ref for doc in documents]
    repeats: set[tuple[str, tuple[int, int], str, tuple[int, int]]] = set()
    indexed = index.documents(refs)
    matrices = [doc.terms for doc in indexed]
    for question in load_questions():
        # BM25's own top 10 (not `search`, which already folds near-copies)
        _, ids, unknown = index.query_terms(question.question, indexed)
        top = shortlist(ids, matrices, keep=10, unknown_terms=unknown).entries[:10]
        chunks = [indexed[entry.document].chunks[entry.ordinal] for entry in top]
        distinct["dev top 10 (BM25)"].extend(pairs(c.text for c in chunks))
        for a, b in itertools.combinations(chunks, 2):
            if jaccard(shingles(a.text), shingles(b.text)) >= REPORTED:
                repeats.add((a.id, a.pages, b.id, b.pages))
    for ref in refs:
        chunks = index.chunks(ref)
        for a, b in itertools.pairwise(chunks):
            distinct["neighbours"].extend(pairs((a.text, b.text)))
    if args.scifact_queries:
        distinct["SciFact train top 10 (BM25)"] = scifact_pairs(args.scifact_queries)

    print("| near-copies (each passage's best match in the copy) | passages | Jaccard |")
    print("|---|---:|---|")
    for name, values in copies.items():
        describe(name, values, low=True)
    print("\n| distinct passages | pairs | Jaccard |")
    print("|---|---:|---|")
    for name, values in distinct.items():
        describe(name, values, low=False)
    print("\n| threshold | " + " | ".join(copies) + " | " + " | ".join(distinct) + " |")
    print("|---:|" + "---:|" * (len(copies) + len(distinct)))
    for threshold in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
        cells = [share_at_least(v, threshold) for v in (*copies.values(), *distinct.values())]
        print(f"| {threshold:.1f} | " + " | ".join(f"{c:.4f}" for c in cells) + " |")
    top = sorted(
        (value, name) for name, values in distinct.items() for value in values if value >= 0.3
    )[-10:]
    print(f"\nDistinct pairs at 0.3 or more: {top}")
    print(f"Pairs of BM25's top 10 at {REPORTED} or more (read them: repeats or not?):")
    for repeat in sorted(repeats):
        print(f"- {repeat}")
    print(f"CPU {time.process_time() - started:.0f} s")


def scifact_pairs(count: int) -> list[float]:
    """Pairs among BM25's top 10 passages of the first ``count`` SciFact train queries."""
    from bench.quality import Corpus, load_corpus, load_qrels, load_queries

    corpus = Corpus(load_corpus())
    queries = load_queries()
    train = [q for q in load_qrels("train") if q in queries][:count]
    found: list[float] = []
    for q in train:
        top = corpus.top(corpus.bm25(queries[q]), 10)
        found.extend(pairs(corpus.chunks[i].text for i in top))
    return found


if __name__ == "__main__":
    main()
