"""The reranker that does not rerank: BM25 order, no model, no warning."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.rerankers.fallback import bm25_order
from retrieval.types import Candidate, RerankResult


class NoReranker:
    """Keeps BM25 order. Useful as a baseline and when reranking is switched off."""

    name = "none"

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult:
        return bm25_order(candidates)
