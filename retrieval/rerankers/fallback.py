"""The answer every reranker falls back to: BM25 order, untouched."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.types import Candidate, RerankResult


def bm25_order(candidates: Sequence[Candidate], *warnings: str) -> RerankResult:
    """BM25 order (``scores`` are the candidates' own BM25 values), ``reranked=False``."""
    return RerankResult(
        scores=[candidate.bm25 for candidate in candidates],
        reranked=False,
        warnings=tuple(warnings),
    )
