"""Rerankers: reorder a BM25 shortlist. Pick one with :func:`make_reranker`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, TypedDict, cast, overload

from retrieval.rerankers.base import (
    LOCAL_MAX_TOKENS,
    RERANKER_KINDS,
    ClosableReranker,
    CrossLingualReranker,
    GuardedReranker,
    LoadableReranker,
    QueryPreparingReranker,
    Reranker,
    RerankerKind,
    WarmableReranker,
)

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path
    from typing import Unpack

__all__ = [
    "LOCAL_MAX_TOKENS",
    "RERANKER_KINDS",
    "ClosableReranker",
    "CohereOptions",
    "CrossLingualReranker",
    "GuardedReranker",
    "LoadableReranker",
    "LocalOptions",
    "QueryPreparingReranker",
    "Reranker",
    "RerankerKind",
    "WarmableReranker",
    "make_reranker",
]


class CohereOptions(TypedDict, total=False):
    """Keyword options of :class:`~retrieval.rerankers.cohere.CohereReranker` besides its key."""

    model: str
    base_url: str
    timeout: float
    max_retries: int
    max_tokens_per_doc: int
    backoff_initial: float
    backoff_max: float
    failure_threshold: int
    cooldown: float
    max_concurrent_calls: int
    clock: Callable[[], float]


class LocalOptions(TypedDict, total=False):
    """Keyword options of :class:`~retrieval.rerankers.local.LocalReranker`."""

    model_path: Path | None
    tokenizer_path: Path | None
    bm25_weight: float
    bm25_anchor: int
    max_tokens: int
    batch_size: int
    intra_op_num_threads: int | None
    cache_max_entries: int
    cache_max_bytes: int
    warm_threads: int | None
    embed_budget: float | None
    cross_lingual: bool


class _AnyOptions(CohereOptions, LocalOptions, total=False):
    pass


@overload
def make_reranker(
    kind: Literal["cohere"], *, api_key: str, **options: Unpack[CohereOptions]
) -> Reranker: ...
@overload
def make_reranker(kind: Literal["local"], **options: Unpack[LocalOptions]) -> Reranker: ...
@overload
def make_reranker(kind: Literal["none"]) -> Reranker: ...
def make_reranker(
    kind: RerankerKind, *, api_key: str | None = None, **options: Unpack[_AnyOptions]
) -> Reranker:
    """Build the reranker called ``kind`` with its options.

    ``"cohere"`` needs ``api_key=``; ``"local"`` and ``"none"`` need nothing.
    Each module is imported only when chosen (onnxruntime and the Cohere SDK are heavy).
    Raises ValueError for an unknown kind (listing the choices) or options the kind
    does not take.
    """
    if kind == "cohere":
        from retrieval.rerankers.cohere import CohereReranker

        if not api_key:
            raise ValueError("the 'cohere' reranker needs api_key")
        return CohereReranker(api_key, **cast("CohereOptions", options))
    if api_key is not None:
        raise ValueError(f"the {kind!r} reranker takes no api_key")
    if kind == "local":
        from retrieval.rerankers.local import LocalReranker

        return LocalReranker(**cast("LocalOptions", options))
    if kind == "none":
        from retrieval.rerankers.none import NoReranker

        if options:
            raise ValueError(f"the 'none' reranker takes no settings, got {sorted(options)}")
        return NoReranker()
    raise ValueError(f"unknown reranker {kind!r}; choose one of: {', '.join(RERANKER_KINDS)}")
