"""Value types shared by the retrieval pipeline and its rerankers.

This module is the contract between ``retrieval/`` and its callers: the
service hands in :class:`SourceDocument` values and gets :class:`SearchResult`
values back; a reranker sees :class:`Candidate` values and answers with a
:class:`RerankResult`.
"""

from __future__ import annotations

from typing import NamedTuple


class Candidate(NamedTuple):
    """One shortlisted passage as a reranker sees it."""

    key: str
    """Stable cache key of the passage text (sha256 hex of ``text``)."""
    text: str
    """The passage as the reranker should read it (heading breadcrumb, then body)."""
    bm25: float
    """The passage's BM25 score for the query."""


class RerankResult(NamedTuple):
    """What a reranker answers. A reranker never raises: failures are values."""

    scores: list[float]
    """One score per candidate, in candidate order; higher is better. This is the final order."""
    reranked: bool
    """True when a model's scores shaped ``scores``; False means BM25 order."""
    unscored: tuple[int, ...] = ()
    """Indices of candidates the model did not score (deadline passed, cold cache)."""
    warnings: tuple[str, ...] = ()
    """Human-readable notes naming what went wrong, e.g. ``"cohere: HTTP 429, gave up after 2 retries"``."""
