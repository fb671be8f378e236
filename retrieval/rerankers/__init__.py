"""Rerankers: reorder a BM25 shortlist. Pick one with :func:`make_reranker`."""

from __future__ import annotations

from typing import Any

from retrieval.rerankers.base import Reranker

__all__ = ["RERANKER_KINDS", "Reranker", "make_reranker"]

RERANKER_KINDS = ("cohere", "local", "none")
"""What :func:`make_reranker` accepts."""


def make_reranker(kind: str, **settings: Any) -> Reranker:
    """Build the reranker called ``kind``, passing ``settings`` to its constructor.

    ``"cohere"`` needs ``api_key=``; ``"local"`` and ``"none"`` need nothing.
    Each module is imported only when chosen (onnxruntime and the Cohere SDK are heavy).
    """
    if kind == "cohere":
        from retrieval.rerankers.cohere import CohereReranker

        return CohereReranker(**settings)
    if kind == "local":
        from retrieval.rerankers.local import LocalReranker

        return LocalReranker(**settings)
    if kind == "none":
        from retrieval.rerankers.none import NoReranker

        if settings:
            raise ValueError(f"the 'none' reranker takes no settings, got {sorted(settings)}")
        return NoReranker()
    raise ValueError(f"unknown reranker {kind!r}; choose one of: {', '.join(RERANKER_KINDS)}")
