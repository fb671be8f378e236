"""The protocol every reranker implements, the kinds there are, and optional abilities.

A reranker that can do more than rerank says so by having the method: the
service asks with ``isinstance(reranker, WarmableReranker)`` (and so on), never
by probing attributes, the way blob stores declare ``MultipartBlobStore``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Literal, Protocol, get_args, runtime_checkable

from retrieval.rerankers.circuit import CircuitBreaker
from retrieval.types import AcrossLanguages, Candidate, RerankResult

RerankerKind = Literal["cohere", "local", "none"]
"""The rerankers :func:`~retrieval.rerankers.make_reranker` builds."""

RERANKER_KINDS: tuple[RerankerKind, ...] = get_args(RerankerKind)

LOCAL_MAX_TOKENS = 256
"""Word pieces of a passage the local model reads by default (issue #25: 256 beat 128 on
every quality measure taken, for about twice the embedding CPU; ``bench/embed_cost.py``)."""

CROSS_LINGUAL_MARGIN = 0.08
"""A passage in another language joins the results only when its cosine stands this far above
the median of such passages (:attr:`~retrieval.types.CrossLingualMatch.margin`). Chosen on the
development set's tuning fold (``bench/cross_lingual.py``)."""

CROSS_LINGUAL_MARGIN_WITHOUT_EVIDENCE = 0.03
"""The margin that suffices when nothing found in the question's own language is evidence (the
verdict would call the result insufficient): then the answer is likelier to be on a page in
another language, and passages there that stand out less join the result too. Chosen on the
tuning fold (``bench/cross_lingual.py --weak-margins``: 0.00 to 0.05 gain the same question,
0.06 none)."""

CROSS_LINGUAL_PLACE = 3
"""Where such a passage goes in the results: third, below the two best passages found in the
question's own language, so a question that BM25 answers keeps its first hit. On the tuning
fold second and third placed the margin's passages equally well, and third did better for those
joining without evidence (``bench/cross_lingual.py --places 2 3``)."""


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


@runtime_checkable
class WarmableReranker(Reranker, Protocol):
    """A reranker that can prepare passages ahead of queries (the local model's vectors)."""

    def warm(self, passages: Iterable[tuple[str, str]]) -> int:
        """Prepare the ``(key, text)`` passages; return how many needed work."""
        ...

    def uncached(self, keys: Iterable[str]) -> list[str]:
        """Those of ``keys`` not prepared yet (how much warming is left)."""
        ...

    @property
    def evictions(self) -> int:
        """How many prepared passages it has dropped since start (grows, never shrinks)."""
        ...


@runtime_checkable
class QueryPreparingReranker(Reranker, Protocol):
    """A reranker with work to do on the query alone (the local model's query vector), which a
    search can have done while its candidates are still being found."""

    def prepare(self, query: str) -> None:
        """Do the query's own part of a later :meth:`rerank` now (never raises: a failure is
        left for :meth:`rerank` to meet and report)."""
        ...


@runtime_checkable
class CrossLingualReranker(Reranker, Protocol):
    """A reranker that can find passages written in another language than the query's, which
    BM25 cannot (the local model's multilingual vectors, :mod:`retrieval.rerankers.cross_lingual`)."""

    def cross_lingual(
        self, query: str, keys: Sequence[str], text_of: Callable[[int], str]
    ) -> AcrossLanguages:
        """The passages among ``keys`` in another language than ``query``'s that stand out as
        closest to it, best first, and where they go; ``text_of(position)`` is a passage's
        text, read only for passages the reranker has to look at (a one-shot search, which
        prepares every passage)."""
        ...

    def warm_across_languages(self, passages: Iterable[tuple[str, str]]) -> int:
        """Prepare the ``(key, text)`` passages for :meth:`cross_lingual`; how many needed work."""
        ...

    def uncached_across_languages(self, keys: Iterable[str]) -> list[str]:
        """Those of ``keys`` not prepared for :meth:`cross_lingual` yet."""
        ...

    @property
    def cross_lingual_error(self) -> str | None:
        """Why passages in other languages cannot be found, once that is known (the model
        could not load here); ``None`` otherwise."""
        ...


@runtime_checkable
class LoadableReranker(Reranker, Protocol):
    """A reranker with a model to load, that can say why loading failed."""

    def load(self) -> object | None:
        """Load the model once; ``None`` when it cannot be loaded."""
        ...

    @property
    def load_error(self) -> str | None:
        """Why the model could not be loaded, once a load has failed; else ``None``."""
        ...


@runtime_checkable
class ClosableReranker(Reranker, Protocol):
    """A reranker holding resources (threads, HTTP connections) to release."""

    def close(self) -> None: ...


@runtime_checkable
class GuardedReranker(Reranker, Protocol):
    """A reranker behind a circuit breaker (Cohere): its state is worth watching."""

    @property
    def breaker(self) -> CircuitBreaker: ...
