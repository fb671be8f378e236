"""LocalReranker: the real MiniLM ONNX model from the installed packages, offline."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from retrieval.relevance import EVIDENCE_FLOOR
from retrieval.rerankers.embedder import DIMENSIONS, MiniLMEmbedder
from retrieval.rerankers.fusion import min_max
from retrieval.rerankers.local import BM25_ANCHOR, BM25_WEIGHT, LocalReranker
from retrieval.rerankers.vector_cache import VectorCache
from retrieval.types import Candidate
from tests.support.paths import REPO_DIR


def _candidate(text: str, bm25: float) -> Candidate:
    return Candidate(hashlib.sha256(text.encode()).hexdigest(), text, bm25)


def _long_passage(number: int) -> str:
    """About 200 distinct-ish words, so each passage costs a full model pass."""
    words = [f"topic{number}", "protein", "expression", "cells", "patients", "trial"]
    return " ".join(f"{words[i % len(words)]}{(i * 7 + number) % 97}" for i in range(200))


@pytest.fixture(scope="module")
def shared() -> LocalReranker:
    """One loaded reranker for tests that do not count embeddings or need a cold cache."""
    return LocalReranker(intra_op_num_threads=2)


@pytest.fixture(scope="module")
def embedder(shared: LocalReranker) -> MiniLMEmbedder:
    loaded = shared.load()
    assert loaded is not None
    return loaded


_NO_NETWORK_SCRIPT = """
import json, socket, time
attempts = []
def refuse(self, address, *args, **kwargs):
    attempts.append(repr(address))
    raise OSError("network disabled by test")
socket.socket.connect = refuse
socket.socket.connect_ex = refuse
socket.create_connection = lambda address, *a, **k: refuse(None, address)

from retrieval.rerankers.local import LocalReranker
from retrieval.types import Candidate
reranker = LocalReranker(intra_op_num_threads=1)
candidates = [Candidate("a", "The weather in Paris today.", 3.0),
              Candidate("b", "Aspirin lowers the risk of heart attack.", 2.0),
              Candidate("c", "Heart disease and its drugs, in numbers.", 1.0)]
# An hour: loading the model on a swamped machine must not run the deadline out.
result = reranker.rerank("does aspirin prevent heart attacks", candidates,
                         deadline=time.monotonic() + 3600)
print(json.dumps({"reranked": result.reranked, "warnings": list(result.warnings),
                  "scores": result.scores, "attempts": attempts}))
"""


def test_loads_and_reranks_with_the_network_blocked() -> None:
    environment = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    completed = subprocess.run(
        [sys.executable, "-c", _NO_NETWORK_SCRIPT],
        cwd=REPO_DIR,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,  # a hang guard only: the test asserts no time
        check=True,
    )
    report = json.loads(completed.stdout.strip().splitlines()[-1])
    assert report["attempts"] == []
    assert report["warnings"] == []
    assert report["reranked"] is True
    assert report["scores"][1] > report["scores"][0]  # the model overruled BM25


def test_embeddings_are_unit_length(embedder: MiniLMEmbedder) -> None:
    vectors = embedder.embed(["short", "a somewhat longer sentence about proteins " * 20])
    assert vectors.shape == (2, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_paraphrase_is_closer_than_unrelated_text(embedder: MiniLMEmbedder) -> None:
    query, paraphrase, unrelated = embedder.embed(
        [
            "Smoking increases the risk of lung cancer.",
            "People who smoke are more likely to develop lung tumours.",
            "The stock market closed higher on Friday.",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.3


def test_embedding_ignores_padding(embedder: MiniLMEmbedder) -> None:
    alone = embedder.embed(["Vitamin D and bone density."])[0]
    padded = embedder.embed(["Vitamin D and bone density.", "a much longer text " * 30])[0]
    assert np.allclose(alone, padded, atol=1e-4)


def test_rerank_fuses_bm25_with_cosine_as_documented(
    shared: LocalReranker, embedder: MiniLMEmbedder
) -> None:
    candidates = [
        _candidate("The weather in Paris today.", 6.0),
        _candidate("Aspirin lowers the risk of heart attack.", 4.0),
        _candidate("A recipe for apple pie.", 1.0),
    ]
    query = "does aspirin prevent heart attacks"
    result = shared.rerank(query, candidates, deadline=time.monotonic() + 30)
    query_vector = embedder.embed([query])[0]
    cosine = [float(query_vector @ embedder.embed([c.text])[0]) for c in candidates]
    expected = [
        BM25_WEIGHT * b + (1 - BM25_WEIGHT) * c
        for b, c in zip(min_max([c.bm25 for c in candidates]), min_max(cosine), strict=True)
    ]
    assert result.reranked
    assert result.unscored == ()
    assert result.scores == pytest.approx(expected, abs=1e-4)
    assert max(range(3), key=result.scores.__getitem__) == 1
    assert result.bm25_anchor == BM25_ANCHOR == 3  # BM25's first stays in the first three


def test_a_negative_anchor_is_refused() -> None:
    with pytest.raises(ValueError, match="bm25_anchor"):
        LocalReranker(bm25_anchor=-1)


def test_relevance_is_absolute_not_relative_to_the_candidates(shared: LocalReranker) -> None:
    query = "How many cells are counted in the hot spot method of Ki67 assessment?"
    answer = Candidate(
        "a",
        "Hot spot assessment: counting a single field of 500 cells in the tumour area with the "
        "highest Ki67 labelling rate.",
        3.0,
        0.9,
    )
    filler = [
        Candidate("b", "The fund's Class A shares carry a front-end sales charge.", 1.0, 0.1),
        Candidate("c", "Airfare for the senator from Washington DC to Saint Louis.", 0.5, 0.1),
    ]
    with_answer = shared.rerank(query, [answer, *filler], deadline=time.monotonic() + 30)
    without = shared.rerank(query, filler, deadline=time.monotonic() + 30)
    assert len(with_answer.relevance) == 3 and len(without.relevance) == 2
    assert all(0.0 <= value <= 1.0 for value in (*with_answer.relevance, *without.relevance))
    # The fused score only orders; relevance stays low for the best filler.
    assert max(without.relevance) < EVIDENCE_FLOOR < 0.8 < with_answer.relevance[0]
    assert without.relevance == pytest.approx(with_answer.relevance[1:])


def test_empty_candidate_list_gives_empty_result(shared: LocalReranker) -> None:
    result = shared.rerank("q", [], deadline=time.monotonic() + 1)
    assert result.scores == []
    assert not result.reranked


class _WorkClock:
    """Simulated seconds that pass only as the reranker works: ``per_passage`` for each
    passage it has embedded and ``per_query`` for each query vector. A budget test then
    counts work, not the machine's load."""

    def __init__(self, per_passage: float, per_query: float = 0.01) -> None:
        self.per_passage, self.per_query = per_passage, per_query
        self.reranker: LocalReranker | None = None

    def __call__(self) -> float:
        if self.reranker is None:
            return 0.0
        return (
            self.per_passage * self.reranker.passages_embedded
            + self.per_query * self.reranker.queries_embedded
        )


def _on_work_clock(
    per_passage: float, embed_budget: float | None = None
) -> tuple[LocalReranker, _WorkClock]:
    clock = _WorkClock(per_passage)
    reranker = LocalReranker(
        intra_op_num_threads=2, max_tokens=128, embed_budget=embed_budget, clock=clock
    )
    clock.reranker = reranker
    return reranker, clock


def test_cold_cache_answers_partially_by_the_deadline() -> None:
    reranker, clock = _on_work_clock(0.05)
    candidates = [_candidate(_long_passage(n), 100.0 - n) for n in range(150)]
    budget = 1.5
    started = clock()
    result = reranker.rerank("protein expression", candidates, deadline=started + budget)
    assert clock() - started <= budget + 0.05  # at most the passage that crossed it
    assert result.reranked
    assert 0 < len(result.unscored) < len(candidates)
    assert result.warnings == ()  # partly ranked is said by the unscored count
    # Embedding goes in BM25 order, so the unscored are the BM25 tail...
    assert result.unscored == tuple(range(len(candidates) - len(result.unscored), len(candidates)))
    # ...and their score is the BM25 part alone.
    bm25_part = min_max([c.bm25 for c in candidates])
    for index in result.unscored:
        assert result.scores[index] == pytest.approx(BM25_WEIGHT * bm25_part[index])
    assert reranker.passages_embedded == len(candidates) - len(result.unscored)
    # 1.5 s at 0.05 s a passage, batches sized with a 1.25 safety factor: 20 to 30 passages.
    assert 20 <= reranker.passages_embedded <= 30


def test_deadline_already_passed_gives_bm25_order(shared: LocalReranker) -> None:
    candidates = [_candidate("alpha", 2.0), _candidate("beta", 1.0)]
    result = shared.rerank("alpha", candidates, deadline=time.monotonic() - 1)
    assert not result.reranked
    assert result.scores == [2.0, 1.0]
    assert result.warnings == ("local: deadline passed before scoring",)


def test_warm_then_rerank_embeds_nothing_new() -> None:
    reranker = LocalReranker(intra_op_num_threads=2)
    candidates = [_candidate(f"Passage number {n} about vaccines.", float(n)) for n in range(12)]
    assert reranker.warm((c.key, c.text) for c in candidates) == 12
    assert reranker.passages_embedded == 12
    result = reranker.rerank("vaccines", candidates, deadline=time.monotonic() + 30)
    assert result.reranked
    assert result.unscored == ()
    assert reranker.passages_embedded == 12
    assert reranker.warm((c.key, c.text) for c in candidates) == 0


def test_missing_model_gives_bm25_order_with_a_warning(tmp_path: Path) -> None:
    reranker = LocalReranker(model_path=tmp_path / "missing.onnx")
    candidates = [_candidate("alpha", 2.0), _candidate("beta", 1.0)]
    result = reranker.rerank("alpha", candidates, deadline=time.monotonic() + 5)
    assert not result.reranked
    assert result.scores == [2.0, 1.0]
    assert result.warnings[0].startswith("local: model unavailable")
    assert reranker.warm([("k", "text")]) == 0


def test_vector_cache_evicts_least_recently_used_by_count_and_bytes() -> None:
    vector = np.ones(4, dtype=np.float32)  # 16 bytes
    by_count = VectorCache(max_entries=2, max_bytes=10_000)
    by_count.put_many("m", [("a", vector), ("b", vector)])
    by_count.get_many("m", ["a"])  # "a" is now the most recently used
    by_count.put_many("m", [("c", vector)])
    assert set(by_count.get_many("m", ["a", "b", "c"])) == {"a", "c"}
    by_bytes = VectorCache(max_entries=100, max_bytes=40)
    by_bytes.put_many("m", [("a", vector), ("b", vector), ("c", vector)])
    assert len(by_bytes) == 2
    assert by_bytes.nbytes == 32
    assert by_bytes.get_many("other-model", ["b", "c"]) == {}


def test_concurrent_reranks_share_the_model_and_agree(shared: LocalReranker) -> None:
    candidates = [_candidate(f"Statins and cholesterol, study {n}.", float(n)) for n in range(6)]
    deadline = time.monotonic() + 60
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(
            pool.map(lambda _: shared.rerank("statins", candidates, deadline=deadline), range(4))
        )
    assert all(result.reranked for result in results)
    for result in results[1:]:
        assert result.scores == pytest.approx(results[0].scores, abs=1e-5)


def test_the_embedding_budget_bounds_a_cold_query_below_its_deadline() -> None:
    reranker, clock = _on_work_clock(0.05, embed_budget=0.3)
    candidates = [_candidate(_long_passage(n), 100.0 - n) for n in range(60)]
    started = clock()
    result = reranker.rerank("protein expression", candidates, deadline=started + 30)
    # The budget, not the 30 s deadline, ended it: the query vector and at most the
    # passage that crossed the budget on top.
    assert clock() - started <= 0.3 + 0.05
    assert 1 <= reranker.passages_embedded <= 6
    assert result.reranked
    assert 0 < len(result.unscored) < len(candidates)
    assert len(result.unscored) == len(candidates) - reranker.passages_embedded
    assert result.warnings == ()  # partly ranked is said by the unscored count


def test_a_repeated_query_reuses_its_vector() -> None:
    reranker = LocalReranker(intra_op_num_threads=2, query_cache_entries=1)
    candidates = [_candidate("Statins lower cholesterol.", 2.0), _candidate("Rain.", 1.0)]
    deadline = time.monotonic() + 30
    first = reranker.rerank("statins", candidates, deadline=deadline)
    again = reranker.rerank("statins", candidates, deadline=deadline)
    assert reranker.queries_embedded == 1
    assert again.scores == first.scores
    reranker.rerank("cholesterol", candidates, deadline=deadline)
    reranker.rerank("statins", candidates, deadline=deadline)  # evicted by the bound of 1
    assert reranker.queries_embedded == 3


def test_a_prepared_query_is_not_embedded_again_by_its_ranking() -> None:
    reranker = LocalReranker(intra_op_num_threads=2)
    reranker.prepare("statins")
    assert reranker.queries_embedded == 1
    candidates = [_candidate("Statins lower cholesterol.", 2.0), _candidate("Rain.", 1.0)]
    result = reranker.rerank("statins", candidates, deadline=time.monotonic() + 30)
    assert reranker.queries_embedded == 1
    assert result.reranked and result.unscored == ()


def test_preparing_with_a_missing_model_leaves_the_ranking_to_say_so(tmp_path: Path) -> None:
    reranker = LocalReranker(model_path=tmp_path / "missing.onnx")
    reranker.prepare("statins")  # does not raise
    result = reranker.rerank(
        "statins", [_candidate("Statins.", 1.0)], deadline=time.monotonic() + 5
    )
    assert not result.reranked
    assert "model unavailable" in result.warnings[0]


def test_warm_embeds_on_its_own_session_and_tells_what_is_uncached() -> None:
    reranker = LocalReranker(intra_op_num_threads=2, warm_threads=1)
    candidates = [_candidate(f"Passage {n} about insulin.", float(n)) for n in range(5)]
    keys = [c.key for c in candidates]
    assert reranker.uncached(keys) == keys
    assert reranker.warm((c.key, c.text) for c in candidates[:3]) == 3
    assert reranker.uncached(keys) == keys[3:]
    query_session = reranker.load()
    assert query_session is not None
    warmed = reranker.cache.get_many(reranker.model_id, keys[:1])[keys[0]]
    assert np.allclose(warmed, query_session.embed([candidates[0].text])[0], atol=1e-4)


def test_one_slow_moment_does_not_stop_later_queries_from_scoring() -> None:
    reranker = LocalReranker(intra_op_num_threads=2, embed_budget=0.3, max_tokens=128)
    reranker.load()
    reranker._seconds_per_passage = 5.0  # as measured once while the machine was swamped
    candidates = [_candidate(_long_passage(n), 100.0 - n) for n in range(20)]
    result = reranker.rerank("protein expression", candidates, deadline=time.monotonic() + 30)
    assert result.reranked
    assert len(result.unscored) < len(candidates)
    assert reranker._seconds_per_passage is not None and reranker._seconds_per_passage < 5.0
