"""What joining English derivational families (:func:`retrieval.tokenize.fold_derivation`) changes.

BM25 alone (bm25s, Lucene, k1 = 1.5, b = 0.75) over the same passages, tokenised with and
without the derivational rules:

* SciFact, train and test: nDCG@10 over documents (the rules were written from word lists,
  not tuned on either split);
* the development set (all of ``bench/data/corpus_dev.jsonl``, per fold): page hit@1 / hit@3
  of answerable questions;
* which stems the rules join in each corpus's vocabulary (how many, and the commonest), to read
  for precision: two unrelated words meeting would show there.

From the repository root::

    .venv/bin/python -m bench.derivation
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence

import bm25s
import numpy as np

from bench.corpus_dev import Fold, load_documents, load_questions
from bench.quality import load_corpus, load_qrels, load_queries, ndcg_at
from retrieval.index import ChunkIndex
from retrieval.tokenize import Tokenizer, fold_derivation, words_of


def _index(tokenizer: Tokenizer, passages: Sequence[str]) -> bm25s.BM25:
    model = bm25s.BM25()
    model.index([tokenizer.document_terms(text) for text in passages], show_progress=False)
    return model


def _top(model: bm25s.BM25, tokenizer: Tokenizer, query: str, k: int) -> list[int]:
    scores = np.asarray(model.get_scores(tokenizer.query_terms(query)))
    order = np.argsort(-scores, kind="stable")[:k]
    return [int(i) for i in order if scores[i] > 0]


def _joined(passages: Sequence[str]) -> list[tuple[str, int, list[str]]]:
    """The families the rules join in ``passages``: each joined stem, how many word occurrences
    it gathers, and a word of each Snowball stem it joins (only where two or more meet)."""
    plain = Tokenizer("english", derivation=False)
    counts: Counter[str] = Counter()
    for text in passages:
        counts.update(words_of(text))
    members: dict[str, dict[str, tuple[int, str]]] = {}
    for word, count in counts.items():
        for stem in plain.query_terms(word):
            seen, example = members.setdefault(fold_derivation(stem), {}).get(stem, (0, word))
            members[fold_derivation(stem)][stem] = (seen + count, example)
    joined = [
        (target, sum(n for n, _ in stems.values()), [word for _, word in stems.values()])
        for target, stems in members.items()
        if len(stems) > 1
    ]
    return sorted(joined, key=lambda row: -row[1])


def main() -> None:
    tokenizers = {
        "Snowball": Tokenizer("english", derivation=False),
        "+ derivation": Tokenizer("english"),
    }
    documents = load_corpus()
    index = ChunkIndex()
    index.add(documents)
    chunks = [c for doc in documents for c in index.chunks(doc.ref)]
    passages = [text for doc in documents for _, text in index.reader_passages(doc.ref)]
    queries = load_queries()
    print("## SciFact, BM25 alone: nDCG@10\n")
    print("| tokenizer | train | test |")
    print("|---|---:|---:|")
    for name, tokenizer in tokenizers.items():
        model = _index(tokenizer, passages)
        cells = []
        for split in ("train", "test"):
            qrels = load_qrels(split)
            gains = []
            for q in (q for q in qrels if q in queries):
                top = _top(model, tokenizer, queries[q], 300)
                ranked = list(dict.fromkeys(chunks[i].document_id for i in top))
                gains.append(ndcg_at(ranked, qrels[q]))
            cells.append(f"{statistics.fmean(gains):.4f}")
        print(f"| {name} | {' | '.join(cells)} |")
    scifact_joined = _joined(passages)

    dev_documents = load_documents()
    dev_index = ChunkIndex(language="english")
    indexed = dev_index.documents([d.ref for d in dev_documents], add=dev_documents)
    dev_chunks = [(doc.ref.id, chunk.pages) for doc in indexed for chunk in doc.chunks]
    dev_passages = [doc.reader_text(n) for doc in indexed for n in range(len(doc.chunks))]
    print(
        "\n## Development set, BM25 alone (every document stemmed as English): page hit@1 / hit@3\n"
    )
    print("| tokenizer | tuning | test |")
    print("|---|---:|---:|")
    folds: tuple[Fold, ...] = ("tuning", "test")
    for name, tokenizer in tokenizers.items():
        model = _index(tokenizer, dev_passages)
        cells = []
        for fold in folds:
            ones, threes = [], []
            for question in (q for q in load_questions(fold=fold) if q.document is not None):
                top = _top(model, tokenizer, question.question, 3)
                right = [
                    dev_chunks[i][0] == question.document
                    and any(dev_chunks[i][1][0] <= p <= dev_chunks[i][1][1] for p in question.pages)
                    for i in top
                ]
                ones.append(any(right[:1]))
                threes.append(any(right))
            cells.append(f"{statistics.fmean(ones):.3f} / {statistics.fmean(threes):.3f}")
        print(f"| {name} | {' | '.join(cells)} |")
    dev_joined = _joined(dev_passages)
    for label, joined in (("SciFact", scifact_joined), ("development set", dev_joined)):
        print(
            f"\n{label}: {len(joined)} families joined ({sum(n for _, n, _ in joined)} word "
            "occurrences); the commonest: "
            + "; ".join(f"{'/'.join(words)} ({n})" for _, n, words in joined[:30])
        )
    print("\nCommand: `.venv/bin/python -m bench.derivation`")


if __name__ == "__main__":
    main()
