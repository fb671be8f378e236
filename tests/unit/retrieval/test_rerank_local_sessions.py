"""LocalReranker's two sessions: a query never waits while the warm-up builds its own (#30)."""

from __future__ import annotations

import hashlib
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from retrieval.rerankers.embedder import MiniLMEmbedder
from retrieval.rerankers.local import LocalReranker
from retrieval.types import Candidate


class HeldWarmSession(LocalReranker):
    """The real reranker, whose warm-up session is built only once the test lets it.

    The model is the real one; what is held is the building of the second session, the step a
    query used to wait behind when both were built under one lock.
    """

    def __init__(self) -> None:
        super().__init__(intra_op_num_threads=1, warm_threads=2)
        self.warm_build_started = threading.Event()
        self.release_warm_build = threading.Event()

    def _new_embedder(self, threads: int | None) -> MiniLMEmbedder:
        if threads == self.warm_threads:
            self.warm_build_started.set()
            assert self.release_warm_build.wait(60), "the test never released the warm build"
        return super()._new_embedder(threads)


def _candidate(text: str, bm25: float) -> Candidate:
    return Candidate(hashlib.sha256(text.encode()).hexdigest(), text, bm25)


def test_a_query_is_scored_while_the_warm_up_session_is_being_built() -> None:
    reranker = HeldWarmSession()
    candidates = [
        _candidate("Tidal flats are feeding grounds for wading birds.", 2.0),
        _candidate("The committee approved the budget for next year.", 1.0),
    ]
    with ThreadPoolExecutor(max_workers=1) as pool:
        warming = pool.submit(reranker.warm, [(c.key, c.text) for c in candidates])
        assert reranker.warm_build_started.wait(60), "the warm-up never began its session"

        # The warm-up is stuck building its session; the query session is loaded and used.
        result = reranker.rerank(
            "where do wading birds feed", candidates, deadline=time.monotonic() + 60
        )

        assert not warming.done(), "the warm-up was still held while the query was answered"
        assert result.reranked and result.unscored == ()
        assert result.scores[0] > result.scores[1]
        reranker.release_warm_build.set()
        assert warming.result(timeout=60) == 0, "the query already embedded both passages"
