"""Does the lexical prefilter (#28) change any answer? SciFact and the page-level dev set,
each as one project searched through the product both ways (``bench/prefilter.py --quality``).

* SciFact: its 5,183 abstracts as one-page documents, the 300 test claims, nDCG@10 over the
  documents of the top 10 hits (as ``bench/quality.py``'s "through ``search``" rows);
* the development set (``bench/data/corpus_dev.jsonl``, both folds and the test fold alone):
  page hit@3 over the extracted corpus documents (``bench/corpus_dev.py`` caches them);
* for both, the share of the exhaustive path's top 10 passages the prefiltered top 10 holds.

Reranker ``none``: the prefilter only changes which passages reach the reranker, and with the
same shortlist any reranker sees the same candidates (the figures say whether it is the same).
"""

from __future__ import annotations

import hashlib
import statistics
import sys
import tempfile
from pathlib import Path

from bench.corpus_dev import CACHE_DIR, CORPUS_DIR, DOCUMENTS, load_questions
from bench.prefilter import (
    add_documents,
    fresh_database,
    kept_share,
    new_project,
    settings_for,
    timed_search,
)
from bench.quality import load_corpus, load_qrels, load_queries, ndcg_at
from retrieval.evaluation import outcome, score
from retrieval.types import SearchResult, SourceDocument
from service.runtime import open_runtime
from service.services import prefilter

TOP_K = 10


async def _searched(
    datname: str, documents: list[SourceDocument], queries: list[str]
) -> dict[str, dict[str, SearchResult]]:
    """Per path, per query, the search's result (hits named by the documents' names)."""
    url = fresh_database(datname)
    with tempfile.TemporaryDirectory() as data_dir:
        async with open_runtime(settings_for(url, Path(data_dir)), background=False) as runtime:
            owner = await new_project(url, "quality")
            await add_documents(url, owner.project_id, documents, suffix=False)
            while await prefilter.backfill(runtime, batch=64):
                pass
    results: dict[str, dict[str, SearchResult]] = {}
    for path, threshold in (("exhaustive", 10**9), ("prefiltered", 1)):
        with tempfile.TemporaryDirectory() as data_dir:
            settings = settings_for(
                url, Path(data_dir), prefilter_min_passages=threshold, cache_max_mb=4096
            )
            async with open_runtime(settings, background=False) as runtime:
                async with runtime.pool.connection() as conn:
                    loaded = await runtime.search.load(conn, owner.project_id, query=queries[0])
                assert (loaded.prefiltered is not None) == (path == "prefiltered")
                results[path] = {}
                for query in queries:
                    _, found = await timed_search(runtime, owner, query, top_k=TOP_K)
                    results[path][query] = found.result._replace(
                        hits=[
                            hit._replace(document_id=hit.document_name) for hit in found.result.hits
                        ]
                    )
        print(f"{datname}: {path} searched", file=sys.stderr)
    return results


def _top(results: dict[str, SearchResult]) -> dict[str, list[str]]:
    return {query: [hit.chunk_id for hit in result.hits] for query, result in results.items()}


async def quality(*, scifact_too: bool = True, dev_too: bool = True) -> None:
    print("| set | measure | exhaustive | prefiltered | difference |")
    print("|---|---|---:|---:|---:|")
    if scifact_too:
        await _scifact()
    if dev_too:
        await _development_set()


async def _scifact() -> None:
    corpus = [doc._replace(name=doc.id) for doc in load_corpus()]
    claims = load_queries()
    qrels = load_qrels("test")
    texts = [claims[query_id] for query_id in qrels]
    scifact = await _searched("shortlist_bench_quality_scifact", corpus, texts)
    ndcg = {}
    for path, results in scifact.items():
        ndcg[path] = statistics.mean(
            ndcg_at(
                list(dict.fromkeys(hit.document_id for hit in results[claims[query_id]].hits)),
                relevant,
            )
            for query_id, relevant in qrels.items()
        )
    print(
        f"| SciFact test ({len(texts)} claims, {len(corpus):,} documents) | nDCG@10 "
        f"| {ndcg['exhaustive']:.4f} | {ndcg['prefiltered']:.4f} "
        f"| {ndcg['prefiltered'] - ndcg['exhaustive']:+.4f} |"
    )
    kept = kept_share(_top(scifact["exhaustive"]), _top(scifact["prefiltered"]))
    print(f"| SciFact test | share of the exhaustive top 10 kept | 1 | {kept:.4f} | |")


def cached_documents() -> list[SourceDocument]:
    """The dev-set documents as ``bench/corpus_dev.py`` last cached their Markdown (the newest
    extraction of each file, whichever extractor made it: both paths read the same text, so
    the comparison does not depend on it; extracting afresh takes a CPU-second a page)."""
    documents = []
    for relative in DOCUMENTS:
        digest = hashlib.sha256((CORPUS_DIR / relative).read_bytes()).hexdigest()
        found = sorted(CACHE_DIR.glob(f"{digest}*full-layout.md"), key=lambda p: p.stat().st_mtime)
        if not found:
            raise SystemExit(f"no cached Markdown of {relative}: run python -m bench.corpus_dev")
        markdown = found[-1].read_text(encoding="utf-8").replace("\x00", "\ufffd")  # as stored
        content_hash = hashlib.sha256(markdown.encode()).hexdigest()
        documents.append(SourceDocument(relative, relative, content_hash, markdown))
    return documents


async def _development_set() -> None:
    documents = cached_documents()
    for fold in (None, "test"):
        questions = load_questions(fold=fold)
        asked = [q.question for q in questions]
        dev = await _searched(f"shortlist_bench_quality_dev_{fold or 'all'}", documents, asked)
        hit3 = {
            path: score([outcome(q.labelled, results[q.question]) for q in questions]).hit_at[3]
            for path, results in dev.items()
        }
        label = f"dev set, fold {fold or 'both'} ({sum(q.document is not None for q in questions)} answerable)"
        print(
            f"| {label} | page hit@3 | {hit3['exhaustive']:.4f} | {hit3['prefiltered']:.4f} "
            f"| {hit3['prefiltered'] - hit3['exhaustive']:+.4f} |"
        )
        kept = kept_share(_top(dev["exhaustive"]), _top(dev["prefiltered"]))
        print(f"| {label} | share of the exhaustive top 10 kept | 1 | {kept:.4f} | |")
