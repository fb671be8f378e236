"""How small may the BM25 shortlist be for *this* corpus? The sweep behind ``shortlist tune``.

The right ``shortlist_keep`` is a property of the corpus and the chunker, so
it is measured on the corpus itself: questions are sampled from the
documents' own text (headings, sentences, table rows), each **held out** from
its passage (cut from the Markdown before indexing, so the passage cannot
match it word for word), and every question is searched reranking every
passage. A ``keep`` "loses nothing" when BM25's top ``keep`` passages hold
all of those top results for every question (the shortlist recall that
``bench/quality.py`` reports for SciFact); the smallest such keep is the
recommendation. The report
also says how often the passage a question came from is in the top results,
and how many of these answerable questions the evidence floor would flag.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from typing import Literal, NamedTuple

from extract.page_markers import find_page_markers, page_at
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.base import Reranker
from retrieval.shortlist import shortlist
from retrieval.types import SourceDocument

QuestionKind = Literal["heading", "sentence", "table row"]
DEFAULT_KEEPS = (25, 50, 100, 200, 400)
DEFAULT_QUESTIONS = 40
TOP = 3
"""How many top results must agree with reranking everything."""

_SENTENCE_RE = re.compile(r"[^.!?。！？\n]{40,240}[.!?。！？]")
_HEADING_RE = re.compile(r"^#{1,6}\s+(.{12,120}?)\s*#*\s*$", re.MULTILINE)
_ROW_RE = re.compile(r"^\|(?:[^|\n]*\|){3,}\s*$", re.MULTILINE)


class TuneQuestion(NamedTuple):
    text: str
    kind: QuestionKind
    document: str
    """Id of the document it was taken from (and held out of)."""
    page: int


class KeepResult(NamedTuple):
    keep: int
    agreement: float
    """Share of the rerank-everything top results that BM25's top ``keep`` holds, averaged
    over the questions (1.0: this keep loses nothing)."""


class TuneReport(NamedTuple):
    documents: int
    passages: int
    questions: int
    reranker: str
    keeps: list[KeepResult]
    smallest_keep: int | None
    """The smallest keep that loses nothing; ``None`` when every keep tried loses something."""
    source_found: float
    """Share of questions whose own page is among the top results (reranking everything)."""
    flagged: float
    """Share of these answerable questions the evidence floor flags as unanswered."""

    def to_dict(self) -> dict[str, object]:
        return {
            "documents": self.documents,
            "passages": self.passages,
            "questions": self.questions,
            "reranker": self.reranker,
            "keeps": [{"keep": k.keep, "agreement": k.agreement} for k in self.keeps],
            "smallest_keep": self.smallest_keep,
            "source_found": self.source_found,
            "insufficient_evidence_rate": self.flagged,
        }


def sample_questions(
    documents: Sequence[SourceDocument], count: int, *, seed: int = 0
) -> list[TuneQuestion]:
    """Up to ``count`` questions from the documents' text, spread over kinds and documents."""
    pools: dict[QuestionKind, list[TuneQuestion]] = {"heading": [], "sentence": [], "table row": []}
    patterns: tuple[tuple[QuestionKind, re.Pattern[str]], ...] = (
        ("heading", _HEADING_RE),
        ("sentence", _SENTENCE_RE),
        ("table row", _ROW_RE),
    )
    for doc in documents:
        markers = find_page_markers(doc.markdown)
        for kind, pattern in patterns:
            for match in pattern.finditer(doc.markdown):
                text = (match.group(1) if kind == "heading" else match.group(0)).strip()
                if kind == "heading":
                    text = text.strip("*_ ")
                    if len(text) < 12:
                        continue
                if kind == "table row":
                    text = " ".join(cell.strip() for cell in text.strip("|").split("|"))
                    if len(text) < 20 or set(text) <= set("-: "):
                        continue
                page = page_at(markers, match.start())
                pools[kind].append(TuneQuestion(text, kind, doc.id, page))
    rng = random.Random(seed)  # noqa: S311 - sampling questions, not security
    for pool in pools.values():
        rng.shuffle(pool)
    picked: list[TuneQuestion] = []
    queues = [pool for pool in pools.values() if pool]
    while len(picked) < count and any(queues):
        for pool in queues:
            if pool and len(picked) < count:
                picked.append(pool.pop())
    return picked


def held_out(
    documents: Sequence[SourceDocument], questions: Sequence[TuneQuestion]
) -> list[SourceDocument]:
    """The documents with each question's text cut from its own document (once)."""
    cut: dict[str, str] = {doc.id: doc.markdown for doc in documents}
    for question in questions:
        raw = question.text if question.kind != "table row" else None
        if raw is not None and raw in cut[question.document]:
            cut[question.document] = cut[question.document].replace(raw, "", 1)
    return [
        SourceDocument(doc.id, doc.name, f"{doc.content_hash}:tune", cut[doc.id])
        for doc in documents
    ]


def sweep(
    documents: Sequence[SourceDocument],
    reranker: Reranker,
    *,
    questions: int = DEFAULT_QUESTIONS,
    keeps: Sequence[int] = DEFAULT_KEEPS,
    chunk_size: int | None = None,
    language: str = "auto",
    rerank_timeout: float = 120.0,
    seed: int = 0,
) -> TuneReport:
    """Sample questions, hold them out, and compare each keep with reranking everything."""
    sampled = sample_questions(documents, questions, seed=seed)
    corpus = held_out(documents, sampled)
    index = (
        ChunkIndex(language=language)
        if chunk_size is None
        else ChunkIndex(chunk_size=chunk_size, language=language)
    )
    index.add(corpus)
    refs = [doc.ref for doc in corpus]
    total = sum(len(index.chunks(ref)) for ref in refs)
    tried = sorted({keep for keep in keeps if keep < total} | {total}) if total else []
    agree = dict.fromkeys(tried, 0.0)
    found = flagged = 0
    indexed = index.documents(refs)
    matrices = [doc.terms for doc in indexed]
    for question in sampled:
        reference = search(
            index, question.text, refs, reranker=reranker, top_k=TOP,
            keep=max(total, 1), max_candidates=max(total, 1), rerank_timeout=rerank_timeout,
        )  # fmt: skip
        best = {hit.chunk_id for hit in reference.hits}
        found += any(
            hit.document_id == question.document and hit.pages[0] <= question.page <= hit.pages[1]
            for hit in reference.hits
        )
        flagged += reference.insufficient_evidence
        _, ids, unknown = index.query_terms(question.text, indexed)
        for keep in tried:
            picked = shortlist(ids, matrices, keep=keep, max_candidates=keep, unknown_terms=unknown)
            kept = {indexed[e.document].chunks[e.ordinal].id for e in picked.entries}
            agree[keep] += len(best & kept) / len(best) if best else 1.0
    count = max(len(sampled), 1)
    results = [KeepResult(keep, agree[keep] / count) for keep in tried]
    lossless = [k.keep for k in results if k.agreement >= 1.0]
    return TuneReport(
        documents=len(documents),
        passages=total,
        questions=len(sampled),
        reranker=reranker.name,
        keeps=results,
        smallest_keep=min(lossless) if lossless else None,
        source_found=found / count,
        flagged=flagged / count,
    )
