"""The background warm-up: what it warms first, that it yields to queries, that it stops.

The tests hold the warm-up thread where they need it (a warmer that waits on an event) and
observe it through what it warms and :meth:`Warmup.wait_idle`, never through the clock.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Iterable, Sequence

import pytest

from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.fallback import bm25_order
from retrieval.rerankers.local import LocalReranker
from retrieval.types import Candidate, RerankResult, SourceDocument
from service.services.warmup import Warmup

WORDS = [
    "protein",
    "expression",
    "cells",
    "patients",
    "trial",
    "insulin",
    "receptor",
    "kinase",
    "tumour",
    "growth",
    "vaccine",
    "antibody",
    "dose",
    "response",
    "mouse",
    "model",
    "gene",
    "mutation",
    "pathway",
    "signal",
]


def _document(project: str, number: int, paragraphs: int = 1) -> SourceDocument:
    body = "\n\n".join(
        " ".join(f"{WORDS[(number * 7 + p * 3 + i) % len(WORDS)]}{i % 13}" for i in range(170))
        for p in range(paragraphs)
    )
    markdown = f"<!-- page 1 -->\n# {project} paper {number}\n\n{body}\n"
    digest = hashlib.sha256(markdown.encode()).hexdigest()
    return SourceDocument(f"{project}-{number}", f"{project}-{number}.pdf", digest, markdown)


class RecordingWarmer:
    """A reranker with an in-memory vector cache that records what it was asked to warm.

    With ``hold_after``, the warm-up thread is held once that many passages are warm:
    :attr:`held` is set, and the thread waits (inside :meth:`warm`) until :attr:`resume` is.
    """

    name = "recording"

    def __init__(self, *, hold_after: int | None = None) -> None:
        self.vectors: set[str] = set()
        self.order: list[str] = []
        """Document ids in the order their first passage was warmed."""
        self.keys: list[str] = []
        """Passage keys in the order they were warmed."""
        self.owner: dict[str, str] = {}
        self.hold_after = hold_after
        self.held = threading.Event()
        self.resume = threading.Event()
        self.batches = 0
        self.thread: threading.Thread | None = None
        """The thread that warms (the warm-up's own)."""
        self.asked = 0
        """How many times the warm-up asked what is not warm yet (each job it runs asks)."""
        self.dropped = 0

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        return bm25_order(candidates)

    def warm(self, passages: Iterable[tuple[str, str]]) -> int:
        self.thread = threading.current_thread()
        new = [key for key, _ in passages if key not in self.vectors]
        for key in new:
            document = self.owner.get(key, "unknown")
            if document not in self.order:
                self.order.append(document)
        self.vectors.update(new)
        self.keys.extend(new)
        self.batches += bool(new)
        if self.hold_after is not None and len(self.vectors) >= self.hold_after:
            self.hold_after = None  # once
            self.held.set()
            assert self.resume.wait(timeout=60), "the test never let the warm-up go on"
        return len(new)

    def uncached(self, keys: Iterable[str]) -> list[str]:
        self.asked += 1
        return [key for key in keys if key not in self.vectors]

    @property
    def evictions(self) -> int:
        return self.dropped

    def evict(self, keys: Iterable[str]) -> None:
        """Drop vectors, as a full cache does."""
        for key in keys:
            if key in self.vectors:
                self.vectors.discard(key)
                self.dropped += 1


def _indexed(index: ChunkIndex, warmer: RecordingWarmer, documents: list[SourceDocument]) -> None:
    index.add(documents)
    for document in documents:
        for key, _ in index.reader_passages(document.ref):
            warmer.owner[key] = document.id


def test_searched_projects_come_first_then_uploads_then_recent_use() -> None:
    index = ChunkIndex()
    warmer = RecordingWarmer()
    old, recent, uploaded, searched = (
        [_document(name, n) for n in range(3)] for name in ("old", "recent", "upload", "search")
    )
    for group in (old, recent, uploaded, searched):
        _indexed(index, warmer, group)
    warmup = Warmup(index, warmer, batch_size=2)
    try:
        with warmup.query():  # hold the worker at its first step while everything is queued
            warmup.want("p-old", "recent", refs=[d.ref for d in old], used=1.0)
            warmup.want("p-recent", "recent", refs=[d.ref for d in recent], used=2.0)
            warmup.want("p-upload", "upload", documents=uploaded[:1])
            warmup.want("p-search", "search", refs=[d.ref for d in searched])
        assert warmup.wait_idle(30)
    finally:
        warmup.close()

    projects = [document.split("-")[0] for document in warmer.order]
    assert projects == ["search"] * 3 + ["upload"] + ["recent"] * 3 + ["old"] * 3

    def passages(documents: list[SourceDocument]) -> int:
        return sum(len(index.chunks(document.ref)) for document in documents)

    progress = {entry.project_id: entry for entry in warmup.progress()}
    assert {p: (e.passages_warm, e.passages_total, e.state) for p, e in progress.items()} == {
        "p-old": (passages(old), passages(old), "warm"),
        "p-recent": (passages(recent), passages(recent), "warm"),
        "p-upload": (passages(uploaded[:1]), passages(uploaded[:1]), "warm"),
        "p-search": (passages(searched), passages(searched), "warm"),
    }


def test_a_search_preempts_the_project_being_warmed_between_batches() -> None:
    index = ChunkIndex()
    warmer = RecordingWarmer(hold_after=5)
    big = [_document("big", n) for n in range(400)]
    searched = [_document("search", n) for n in range(2)]
    _indexed(index, warmer, big + searched)
    warmup = Warmup(index, warmer, batch_size=1)
    try:
        warmup.want("p-big", "recent", refs=[d.ref for d in big])
        assert warmer.held.wait(timeout=60)  # five passages of the big project are warm
        warmup.want("p-search", "search", refs=[d.ref for d in searched])
        warmer.resume.set()
        assert warmup.wait_idle(60)
    finally:
        warmup.close()

    projects = [warmer.owner[key].split("-")[0] for key in warmer.keys]
    assert projects.index("search") == 5, "the searched project waited past the batch in flight"
    assert warmer.vectors == set(warmer.owner), "the preempted project was resumed and finished"


def test_a_search_of_a_project_already_warm_queues_nothing() -> None:
    index = ChunkIndex()
    warmer = RecordingWarmer()
    documents = [_document("p", n) for n in range(2)]
    _indexed(index, warmer, documents)
    warmup = Warmup(index, warmer)
    try:
        warmup.want("p", "search", refs=[d.ref for d in documents])
        assert warmup.wait_idle(60)
        asked = warmer.asked
        warmup.want("p", "search", refs=[d.ref for d in documents])
        queued_nothing = warmup.wait_idle(0) and warmer.asked == asked
        changed = documents[0].ref._replace(content_hash="re-extracted")
        warmup.want("p", "search", refs=[changed, documents[1].ref])
        assert warmup.wait_idle(60)
    finally:
        warmup.close()

    assert queued_nothing, "the same documents, warm already, were queued again"
    assert warmer.asked > asked, "a new version of a document is a new warm-up"


def _keys(index: ChunkIndex, documents: list[SourceDocument]) -> set[str]:
    return {key for document in documents for key, _ in index.reader_passages(document.ref)}


def test_a_project_whose_vectors_were_evicted_is_warmed_again_by_its_next_search() -> None:
    index = ChunkIndex()
    warmer = RecordingWarmer()
    documents = [_document("p", n) for n in range(3)]
    _indexed(index, warmer, documents)
    refs = [d.ref for d in documents]
    warmup = Warmup(index, warmer)
    try:
        warmup.want("p", "search", refs=refs)
        assert warmup.wait_idle(60)
        warmer.evict(_keys(index, documents[:2]))  # another project's queries filled the cache
        warmup.want("p", "search", refs=refs)
        assert warmup.wait_idle(60)
    finally:
        warmup.close()
    assert _keys(index, documents) <= warmer.vectors, "the evicted passages were not re-warmed"
    (entry,) = warmup.progress()
    assert (entry.passages_warm, entry.state) == (entry.passages_total, "warm")


def test_a_project_whose_chunks_were_evicted_is_warmed_again_by_its_next_search() -> None:
    documents = [_document("p", n) for n in range(3)]
    others = [_document("other", n) for n in range(40)]
    sizing = ChunkIndex()
    sizing.add(documents)
    index = ChunkIndex(max_bytes=sizing.nbytes + 1)  # room for p, not for p and the others
    warmer = RecordingWarmer()
    _indexed(index, warmer, documents)
    refs = [d.ref for d in documents]
    warmup = Warmup(index, warmer)
    try:
        warmup.want("p", "search", refs=refs)
        assert warmup.wait_idle(60)
        index.add(others)  # evicts p's chunks
        assert index.missing(refs), "the test evicted nothing"
        index.add(documents)  # p's next search chunks it again...
        asked = warmer.asked
        warmup.want("p", "search", refs=refs)  # ...and asks for its warm-up
        assert warmup.wait_idle(60)
    finally:
        warmup.close()
    assert warmer.asked > asked, "a search after an eviction queued no warm-up"


def test_progress_counts_the_whole_project_not_the_last_job() -> None:
    index = ChunkIndex()
    warmer = RecordingWarmer()
    searched = [_document("p", n, paragraphs=3) for n in range(3)]
    uploaded = _document("p", 9)
    _indexed(index, warmer, searched)
    warmup = Warmup(index, warmer)
    try:
        warmup.want("p", "search", refs=[d.ref for d in searched])
        assert warmup.wait_idle(60)
        warmup.want("p", "upload", documents=[uploaded])
        assert warmup.wait_idle(60)
    finally:
        warmup.close()
    everything = len(_keys(index, [*searched, uploaded]))
    (entry,) = warmup.progress()
    assert (entry.passages_warm, entry.passages_total, entry.state) == (
        everything,
        everything,
        "warm",
    )


def test_new_documents_are_chunked_by_the_warm_up() -> None:
    index = ChunkIndex()
    warmer = RecordingWarmer()
    document = _document("p", 1)
    warmup = Warmup(index, warmer)
    try:
        warmup.want("p", "upload", documents=[document])
        assert warmup.wait_idle(30)
    finally:
        warmup.close()
    assert index.missing([document.ref]) == []
    assert warmer.vectors == {key for key, _ in index.reader_passages(document.ref)}


def test_the_thread_runs_at_a_lower_priority_and_stops_after_its_batch_when_closed() -> None:
    index = ChunkIndex()
    warmer = RecordingWarmer(hold_after=1)
    documents = [_document("p", n) for n in range(50)]
    _indexed(index, warmer, documents)
    warmup = Warmup(index, warmer, batch_size=1, nice=5)
    warmup.want("p", "recent", refs=[d.ref for d in documents])
    assert warmer.held.wait(timeout=60)  # inside its first batch
    thread = warmer.thread
    assert thread is not None and thread.native_id is not None
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert os.getpriority(os.PRIO_PROCESS, thread.native_id) == min(19, base + 5)

    warmup.close(timeout=0)  # while the batch is in flight
    warmer.resume.set()
    thread.join(timeout=60)
    warmup.want("p", "search", refs=[d.ref for d in documents])  # after close: ignored

    assert not thread.is_alive()
    assert warmer.batches == 1, "a batch was started after close"
    assert warmup.wait_idle(0), "something was queued after close"


@pytest.fixture(scope="module")
def budgeted() -> LocalReranker:
    reranker = LocalReranker(intra_op_num_threads=2, embed_budget=0.4)
    assert reranker.load() is not None
    return reranker


class Announcing:
    """The real local reranker, announcing once its warm-up has embedded ``count`` passages."""

    name = "local"

    def __init__(self, reranker: LocalReranker, count: int) -> None:
        self.reranker = reranker
        self.count = count
        self.embedded = 0
        self.warming = threading.Event()

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        return self.reranker.rerank(query, candidates, deadline=deadline)

    def warm(self, passages: Iterable[tuple[str, str]]) -> int:
        embedded = self.reranker.warm(passages)
        self.embedded += embedded
        if self.embedded >= self.count:
            self.warming.set()
        return embedded

    def uncached(self, keys: Iterable[str]) -> list[str]:
        return self.reranker.uncached(keys)

    @property
    def evictions(self) -> int:
        return self.reranker.evictions


def test_queries_keep_scoring_while_thousands_of_passages_warm_and_the_warm_up_waits(
    budgeted: LocalReranker,
) -> None:
    """How fast a query answers meanwhile is ``bench/cold.py``'s to say; here, that it
    scores within its budget and that the warm-up embeds at most the batch in flight."""
    index = ChunkIndex()
    backlog = [_document("backlog", n, paragraphs=3) for n in range(1000)]
    index.add(backlog)
    passages = sum(len(index.chunks(d.ref)) for d in backlog)
    assert passages >= 3000
    searched = [_document("searched", n, paragraphs=2) for n in range(60)]
    index.add(searched)
    warmer = Announcing(budgeted, count=8)
    batch = 4
    warmup = Warmup(index, warmer, batch_size=batch)
    try:
        warmup.want("backlog", "recent", refs=[d.ref for d in backlog])
        assert warmer.warming.wait(timeout=120), "the warm-up never embedded"
        answers = []
        for number, words in enumerate(zip(WORDS, reversed(WORDS), strict=True)):
            query = f"{words[0]} {words[1]} study {number}"
            with warmup.query():
                before = warmer.embedded
                result = search(
                    index,
                    query,
                    [d.ref for d in searched],
                    reranker=budgeted,
                    rerank_timeout=10.0,
                )
                during = warmer.embedded - before
            answers.append((during, result))
        still_warming = not warmup.wait_idle(0)
    finally:
        warmup.close()

    assert still_warming, "the backlog finished: the test proved nothing"
    for during, result in answers:
        assert during <= batch, f"the warm-up embedded {during} passages during one query"
        assert result.unscored < result.candidates, "a query scored nothing: starved"


def test_documents_in_another_language_get_their_multilingual_vectors_too() -> None:
    german = (
        "<!-- page 1 -->\n# Prüfbericht\n\nDie fertige Erdgasleitung zwischen Vreden und Werne hat "
        "1.250 Rundnähte; jede Schweißnaht wurde geröntgt und geprüft, bevor die Leitung in "
        "Betrieb ging. Die Prüfer haben die Ergebnisse für den Betreiber aufgeschrieben.\n"
    )
    documents = [
        SourceDocument(
            "de", "pruefbericht.pdf", hashlib.sha256(german.encode()).hexdigest(), german
        ),
        _document("en", 1),
    ]
    index = ChunkIndex()
    local = LocalReranker(intra_op_num_threads=1)
    warmup = Warmup(index, local)
    try:
        warmup.want("p", "upload", documents=documents)
        assert warmup.wait_idle(120)
    finally:
        warmup.close()
    german_keys, english_keys = (
        [key for key, _ in index.reader_passages(document.ref)] for document in documents
    )
    assert local.uncached(german_keys + english_keys) == []  # MiniLM: every passage
    assert local.uncached_across_languages(german_keys) == []
    assert local.uncached_across_languages(english_keys) == english_keys  # English: none
    assert local.matcher is not None and local.matcher.passages_embedded == len(german_keys)
