"""What the health report says of the reranker (``SearchEngine.reranker_status``)."""

from __future__ import annotations

from pathlib import Path

from retrieval.rerankers.cross_lingual import CrossLingualMatcher, E5Embedder, UnsupportedMachine
from retrieval.rerankers.local import LocalReranker
from service.services.search import SearchEngine
from tests.conftest import make_settings


def test_the_report_says_when_passages_in_other_languages_cannot_be_found(tmp_path: Path) -> None:
    settings = make_settings("postgresql://unused@127.0.0.1:9/none", tmp_path)
    local = LocalReranker()
    engine = SearchEngine(settings, local, background=False)
    assert engine.reranker_status() == (True, "local")

    def refused() -> E5Embedder:
        raise UnsupportedMachine("this CPU lacks avx2, fma")

    local.matcher = CrossLingualMatcher(local.cache, embedder=refused)
    local.warm_across_languages([("k", "Die Leitung hat 1.250 Rundnähte.")])  # the load fails
    assert engine.reranker_status() == (
        True,
        "local; across languages off: UnsupportedMachine: this CPU lacks avx2, fma",
    )
