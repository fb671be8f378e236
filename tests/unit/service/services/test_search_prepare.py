"""A search has the reranker work on its query while the database reads (``SearchEngine.prepare``)."""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Future
from pathlib import Path
from uuid import uuid4

import anyio

from retrieval import DocumentRef, SearchResult, SourceDocument
from retrieval.rerankers.local import LocalReranker
from service.services.search import Loaded, SearchEngine
from tests.conftest import make_settings

DOCUMENT = SourceDocument(
    str(uuid4()),
    "statins.md",
    "hash-1",
    "<!-- page 1 -->\n# Statins\n\nStatins lower cholesterol in the blood.\n\n"
    "<!-- page 2 -->\nRain fell on the tidal flats all week.\n",
)


class HeldPrepare(LocalReranker):
    """The real reranker, whose preparation of ``held`` waits until the test lets it go."""

    def __init__(self, held: str) -> None:
        super().__init__(intra_op_num_threads=1)
        self.held = held
        self.started = threading.Event()
        self.release = threading.Event()

    def prepare(self, query: str) -> None:
        if query == self.held:
            self.started.set()
            assert self.release.wait(60), "the test never released the preparation"
        super().prepare(query)


def _engine(tmp_path: Path, reranker: LocalReranker) -> SearchEngine:
    settings = make_settings("postgresql://unused@127.0.0.1:9/none", tmp_path)
    return SearchEngine(settings, reranker, background=False)


def _rank(engine: SearchEngine, query: str, prepared: Future[None] | None) -> SearchResult:
    found = Loaded([DocumentRef(DOCUMENT.id, DOCUMENT.name, DOCUMENT.content_hash)], [DOCUMENT], 1)
    rank = functools.partial(engine.rank, uuid4(), query, found, top_k=3, prepared=prepared)
    return anyio.run(rank)


def test_a_prepared_query_is_embedded_once_for_its_search(tmp_path: Path) -> None:
    reranker = LocalReranker(intra_op_num_threads=1)
    engine = _engine(tmp_path, reranker)
    try:
        prepared = engine.prepare("what lowers cholesterol")
        assert prepared is not None
        assert prepared.result(timeout=60) is None
        assert reranker.queries_embedded == 1, "the preparation embedded the query"
        result = _rank(engine, "what lowers cholesterol", prepared)
        assert reranker.queries_embedded == 1, "the ranking did not embed it again"
        assert result.reranked and result.hits
        assert "Statins" in result.hits[0].text
    finally:
        engine.close()


def test_a_preparation_not_begun_by_the_ranking_is_withdrawn_and_the_ranking_does_it(
    tmp_path: Path,
) -> None:
    reranker = HeldPrepare(held="an earlier search's query")
    engine = _engine(tmp_path, reranker)
    try:
        busy = engine.prepare("an earlier search's query")
        assert reranker.started.wait(60), "the earlier preparation never began"
        prepared = engine.prepare("what lowers cholesterol")  # queued behind it
        assert prepared is not None and not prepared.done()
        result = _rank(engine, "what lowers cholesterol", prepared)
        assert prepared.cancelled(), "the ranking did not wait for a preparation not begun"
        assert result.reranked and result.hits
        reranker.release.set()
        assert busy is not None and busy.result(timeout=60) is None
    finally:
        reranker.release.set()
        engine.close()


def test_a_reranker_with_nothing_to_prepare_gets_no_preparation(tmp_path: Path) -> None:
    settings = make_settings("postgresql://unused@127.0.0.1:9/none", tmp_path)
    assert settings.reranker_kind == "none"
    engine = SearchEngine(settings, background=False)
    try:
        assert engine.prepare("what lowers cholesterol") is None
    finally:
        engine.close()
