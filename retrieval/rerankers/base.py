"""The one protocol every reranker implements."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from retrieval.types import Candidate, RerankResult


class Reranker(Protocol):
    """Reorders a BM25 shortlist.

    ``deadline`` is a :func:`time.monotonic` instant by which ``rerank`` must
    return. Implementations never raise for a model or network failure: they
    return BM25 order with ``reranked=False`` and a warning naming the cause.
    """

    name: str
    """``"cohere"``, ``"local"`` or ``"none"``: reported with every result."""

    def rerank(
        self, query: str, candidates: Sequence[Candidate], *, deadline: float
    ) -> RerankResult: ...
