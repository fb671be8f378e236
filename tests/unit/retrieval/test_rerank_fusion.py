"""Fusion math and the circuit breaker, on hand-built numbers."""

from __future__ import annotations

import pytest

from retrieval.rerankers.circuit import CircuitBreaker
from retrieval.rerankers.fusion import linear_fusion, min_max, reciprocal_rank_fusion


def test_min_max_maps_lowest_to_zero_and_highest_to_one() -> None:
    assert min_max([2.0, 4.0, 3.0]) == [0.0, 1.0, 0.5]


def test_min_max_of_equal_values_is_all_zero() -> None:
    assert min_max([7.0, 7.0]) == [0.0, 0.0]
    assert min_max([]) == []


def test_linear_fusion_weights_normalised_bm25_and_cosine() -> None:
    fused = linear_fusion([10.0, 5.0, 0.0], [0.2, 0.8, 0.5], bm25_weight=0.35)
    # bm25 -> [1, 0.5, 0]; cosine -> [0, 1, 0.5]
    assert fused == pytest.approx([0.35, 0.35 * 0.5 + 0.65, 0.65 * 0.5])


def test_linear_fusion_gives_unscored_candidates_the_bm25_part_only() -> None:
    fused = linear_fusion([10.0, 5.0, 0.0], [None, 0.8, 0.2], bm25_weight=0.4)
    # cosine normalised over the scored two: [-, 1, 0]
    assert fused == pytest.approx([0.4, 0.4 * 0.5 + 0.6, 0.0])


def test_linear_fusion_rejects_weights_outside_unit_interval() -> None:
    with pytest.raises(ValueError, match="bm25_weight"):
        linear_fusion([1.0], [1.0], bm25_weight=1.5)


def test_linear_fusion_rejects_mismatched_lengths() -> None:
    with pytest.raises(ValueError, match="one value per candidate"):
        linear_fusion([1.0, 2.0], [1.0], bm25_weight=0.5)


def test_rrf_of_opposite_rankings_ties_the_ends_and_keeps_the_middle() -> None:
    fused = reciprocal_rank_fusion([[3.0, 2.0, 1.0], [1.0, 2.0, 3.0]], k=60)
    assert fused[0] == pytest.approx(fused[2])
    assert fused[0] == pytest.approx(1 / 61 + 1 / 63)
    assert fused[1] == pytest.approx(2 / 62)


def test_circuit_opens_at_threshold_and_half_opens_after_cooldown() -> None:
    now = [100.0]
    breaker = CircuitBreaker(failure_threshold=2, cooldown=10.0, clock=lambda: now[0])
    breaker.record_failure()
    assert breaker.seconds_until_retry() == 0.0
    breaker.record_failure()
    assert breaker.seconds_until_retry() == pytest.approx(10.0)
    now[0] += 10.0
    assert breaker.seconds_until_retry() == 0.0
    breaker.record_failure()  # the trial call failed: open again
    assert breaker.seconds_until_retry() == pytest.approx(10.0)
    breaker.record_success()
    assert breaker.seconds_until_retry() == 0.0
    assert breaker.consecutive_failures == 0
