"""Score fusion for a bi-encoder reranker: combine BM25 with cosine similarity.

Cosine similarity of a small bi-encoder alone reorders a BM25 shortlist worse
than BM25 does, but the two make different mistakes, so a fusion beats both.
Pure functions on plain lists; the chosen method and its constant are recorded in
:mod:`retrieval.rerankers.local` (chosen by ``bench/tune_fusion.py``).
"""

from __future__ import annotations

from collections.abc import Sequence


def min_max(values: Sequence[float]) -> list[float]:
    """Rescale to [0, 1] within ``values`` (all equal -> all 0).

    Min-max normalisation as compared for fusion by Lee, "Analyses of multiple
    evidence combination", SIGIR 1997.
    """
    if not values:
        return []
    low, high = min(values), max(values)
    span = high - low
    if span <= 0:
        return [0.0] * len(values)
    return [(value - low) / span for value in values]


def linear_fusion(
    bm25: Sequence[float], cosine: Sequence[float | None], *, bm25_weight: float
) -> list[float]:
    """``w * minmax(bm25) + (1 - w) * minmax(cosine)`` per candidate.

    A weighted CombSUM (Fox & Shaw, "Combination of multiple searches", TREC-2,
    1994) over min-max-normalised scores. Both normalisations run within the
    given candidates. A candidate whose cosine is ``None`` (not embedded before
    the deadline) gets the BM25 part only, so it can still outrank scored
    candidates that BM25 and the model both rate low, but never by the model's say.
    """
    if len(bm25) != len(cosine):
        raise ValueError("bm25 and cosine must have one value per candidate")
    if not 0.0 <= bm25_weight <= 1.0:
        raise ValueError("bm25_weight must be within [0, 1]")
    bm25_part = min_max(bm25)
    scored = [(index, value) for index, value in enumerate(cosine) if value is not None]
    normalised = min_max([value for _, value in scored])
    cosine_part = {index: part for (index, _), part in zip(scored, normalised, strict=True)}
    return [
        bm25_weight * bm25_part[index] + (1.0 - bm25_weight) * cosine_part.get(index, 0.0)
        for index in range(len(bm25))
    ]


def reciprocal_rank_fusion(rankings: Sequence[Sequence[float]], *, k: float = 60.0) -> list[float]:
    """Sum over score lists of ``1 / (k + rank)``, rank 1 = highest score (ties by position).

    Cormack, Clarke & Büttcher, "Reciprocal rank fusion outperforms Condorcet and
    individual rank learning methods", SIGIR 2009 (k = 60 there).
    """
    if not rankings:
        return []
    count = len(rankings[0])
    fused = [0.0] * count
    for scores in rankings:
        if len(scores) != count:
            raise ValueError("every score list must have one value per candidate")
        order = sorted(range(count), key=lambda index: (-scores[index], index))
        for rank, index in enumerate(order, start=1):
            fused[index] += 1.0 / (k + rank)
    return fused
