"""NoReranker and the make_reranker selector."""

from __future__ import annotations

import time

import pytest

from retrieval.rerankers import (
    RERANKER_KINDS,
    ClosableReranker,
    LoadableReranker,
    WarmableReranker,
    make_reranker,
)
from retrieval.rerankers.cohere import CohereReranker
from retrieval.rerankers.local import LocalReranker
from retrieval.rerankers.none import NoReranker
from retrieval.types import Candidate


def test_no_reranker_keeps_bm25_scores_without_warning() -> None:
    candidates = [Candidate("a", "alpha", 3.5), Candidate("b", "beta", 1.25)]
    result = NoReranker().rerank("q", candidates, deadline=time.monotonic())
    assert result.scores == [3.5, 1.25]
    assert not result.reranked
    assert result.warnings == ()
    assert result.unscored == ()


def test_no_reranker_of_nothing_is_empty() -> None:
    assert NoReranker().rerank("q", [], deadline=time.monotonic()).scores == []


def test_make_reranker_builds_each_kind_by_name() -> None:
    none = make_reranker("none")
    local = make_reranker("local", bm25_weight=0.5)
    cohere = make_reranker("cohere", api_key="k", base_url="http://127.0.0.1:9")
    assert isinstance(none, NoReranker)
    assert isinstance(local, LocalReranker)
    assert local.bm25_weight == 0.5
    assert isinstance(cohere, CohereReranker)
    cohere.close()
    assert (none.name, local.name, cohere.name) == ("none", "local", "cohere")
    assert set(RERANKER_KINDS) == {"none", "local", "cohere"}


def test_optional_abilities_are_declared_by_protocol() -> None:
    local = make_reranker("local")
    cohere = make_reranker("cohere", api_key="k", base_url="http://127.0.0.1:9")
    none = make_reranker("none")
    assert isinstance(local, WarmableReranker) and isinstance(local, LoadableReranker)
    assert not isinstance(local, ClosableReranker)
    assert isinstance(cohere, ClosableReranker) and not isinstance(cohere, WarmableReranker)
    cohere.close()
    assert not isinstance(none, (WarmableReranker, LoadableReranker, ClosableReranker))


def test_make_reranker_cohere_needs_a_key_and_the_others_take_none() -> None:
    with pytest.raises(ValueError, match="'cohere' reranker needs api_key"):
        make_reranker("cohere", api_key="")
    with pytest.raises(ValueError, match="'local' reranker takes no api_key"):
        make_reranker("local", api_key="k")  # type: ignore[call-overload]


def test_make_reranker_none_rejects_settings() -> None:
    with pytest.raises(ValueError, match="takes no settings"):
        make_reranker("none", timeout=3)


def test_make_reranker_rejects_unknown_kind_listing_the_choices() -> None:
    with pytest.raises(ValueError, match="choose one of: cohere, local, none"):
        make_reranker("bm42")
