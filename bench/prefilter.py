"""The lexical prefilter (#28) against the exhaustive path, through the product's search.

Each size gets its own database on the local PostgreSQL (migrated as the service does), one
project of SciFact abstracts laid out as ``bench/latency.py`` lays them out (page-marked
documents, by default of 4 abstracts, one a page, repeated with varied wording), its passage terms written by the
product's own backfill (:func:`service.services.prefilter.backfill`). Then, for each path, a
fresh :class:`~service.services.search.SearchEngine` (an empty cache, as after a restart)
answers the same SciFact claims through :func:`~service.services.search.search_project`,
reranker ``none`` (``--reranker local``: the local model, the product's default without a
Cohere key):

* exhaustive: ``prefilter_min_passages`` above the project (the cache bound raised so that
  the project fits: the fairest case for it);
* prefiltered, every posting: ``prefilter_min_passages`` 1, ``prefilter_term_depth`` 0 (the
  exact BM25 shortlist, which is the exhaustive path's);
* prefiltered: ``prefilter_min_passages`` 1, the default depth and cache bound.

``--warm-vectors`` (with ``--reranker local``) measures the prefiltered path alone as a warm
service answers: before the warm claims are timed, the local model is given the vectors of each
one's candidates through its own ``warm()`` (what the background warm-up does for the passages
searches touch), and the chunk cache is emptied again, so that each search still chunks its
documents as a new claim's does.

Figures: the first query (cold) and the warm p50 / p95, wall-clock, this process's CPU and the
CPU of the database's backends serving it (read from ``/proc``, 10 ms ticks, so per query only
as a mean), the chunk cache's size, the share of the exact top 10 each path's top 10
holds (the exhaustive path's, or where it is not measured the "every posting" path's), and the
full garbage collections during the warm searches (how many, and the longest: each held the
search running then). Start-up's objects are frozen first, as the served app freezes them
(:mod:`service.heap`).
``--quality`` instead compares the two paths' answers on SciFact (nDCG@10, test queries) and
on the page-level development set (page hit@3). From the repository root::

    .venv/bin/python -m bench.prefilter --sizes 10000 100000 --queries 40
    .venv/bin/python -m bench.prefilter --quality
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple
from uuid import UUID, uuid4

import numpy as np
import psycopg
from psycopg import sql as pgsql
from psycopg.rows import dict_row

from bench.bulk_load import DOCUMENT_COLUMNS, bulk_load, ready_document_row
from bench.latency import SCIFACT_DIR, corpus, load_abstracts, load_queries
from retrieval.rerankers import WarmableReranker
from retrieval.types import SourceDocument
from service.heap import freeze_startup_objects
from service.records import Principal
from service.runtime import Runtime, open_runtime
from service.services import prefilter, users
from service.services.search import ProjectSearch, search_project
from service.settings import Settings

SERVER = os.environ.get("SHORTLIST_BENCH_PG", "postgresql://postgres@127.0.0.1:5432")
TICKS = os.sysconf("SC_CLK_TCK")


class Timing(NamedTuple):
    wall: float
    cpu: float


def database_url(name: str) -> str:
    return f"{SERVER}/{name}"


def fresh_database(name: str) -> str:
    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        admin.execute(
            pgsql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(pgsql.Identifier(name))
        )
        admin.execute(pgsql.SQL("CREATE DATABASE {}").format(pgsql.Identifier(name)))
    return database_url(name)


def settings_for(url: str, data_dir: Path, **search: object) -> Settings:
    return Settings.model_validate(
        {
            "database_url": url,
            "data_dir": data_dir,
            "search": {"reranker": "none", **search},
            "server": {"run_worker": False, "search_rate_per_minute": 1_000_000},
            "extraction": {"warm_processes": 0},
        }
    )


async def add_documents(
    url: str, project_id: UUID, documents: Sequence[SourceDocument], *, suffix: bool = True
) -> None:
    """Ready documents straight into the table (no extraction), one COPY; ``suffix`` makes
    repeated names unique."""
    async with (
        await psycopg.AsyncConnection.connect(url, autocommit=True) as conn,
        conn.cursor().copy(f"COPY documents ({DOCUMENT_COLUMNS}) FROM STDIN") as copy,
    ):
        for document in documents:
            name = f"{document.name} {uuid4().hex[:8]}" if suffix else document.name
            await copy.write_row(ready_document_row(project_id, name, document))


async def backend_seconds(url: str, datname: str) -> float:
    """CPU seconds used so far by the database's backends (this machine's /proc)."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        rows = await (
            await conn.execute("SELECT pid FROM pg_stat_activity WHERE datname = %s", (datname,))
        ).fetchall()
    return sum(_ticks(pid) for (pid,) in rows) / TICKS


def _ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


class Owner(NamedTuple):
    """The bench project and its user."""

    user_id: UUID
    project_id: UUID


async def new_project(url: str, name: str) -> Owner:
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, row_factory=dict_row
    ) as conn:
        created = await users.create_user(conn, name)  # type: ignore[arg-type]
    return Owner(created.user.id, created.project.id)


async def existing_project(url: str) -> Owner:
    """The bench project of a database an earlier run made."""
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, row_factory=dict_row
    ) as conn:
        row = await (
            await conn.execute("SELECT user_id, id FROM projects ORDER BY created_at LIMIT 1")
        ).fetchone()
    assert row is not None, "no project: run without --reuse"
    return Owner(row["user_id"], row["id"])


async def timed_search(
    runtime: Runtime, owner: Owner, query: str, top_k: int = 10
) -> tuple[Timing, ProjectSearch]:
    principal = Principal(user_id=owner.user_id, user_name="bench", token_id=uuid4())
    wall, cpu = time.perf_counter(), time.process_time()
    found = await search_project(runtime, principal, owner.project_id, query, top_k=top_k)
    return Timing(time.perf_counter() - wall, time.process_time() - cpu), found


class PathFigures(NamedTuple):
    cold: Timing
    warm: list[Timing]
    backend_cpu_per_query: float
    cache_mb: float
    prefiltered: bool
    top10: dict[str, list[str]]
    rss_mb: float
    """This process's resident memory after the path (only the API's share when the
    documents were not generated in it, i.e. with ``--reuse``, and no path ran before)."""
    full_collections: list[float]
    """The wall seconds of each full garbage collection during the warm searches: each held
    the search running then (:mod:`service.heap`)."""


async def run_path(
    url: str,
    datname: str,
    owner: Owner,
    queries: list[str],
    *,
    warm_vectors: bool = False,
    **search: object,
) -> PathFigures:
    with tempfile.TemporaryDirectory() as data_dir:
        settings = settings_for(url, Path(data_dir), **search)
        async with open_runtime(settings, background=False) as runtime:
            freeze_startup_objects()  # as the served app does once started
            cold, first = await timed_search(runtime, owner, queries[0])
            if warm_vectors:
                embedded = await embed_candidates(runtime, owner, queries[1:])
                print(f"{embedded} candidates' vectors made before timing", file=sys.stderr)
            async with runtime.pool.connection() as conn:
                loaded = await runtime.search.load(conn, owner.project_id, query=queries[1])
            before = await backend_seconds(url, datname)
            warm, top10 = [], {queries[0]: _top(first)}
            with full_collections() as collections:
                for query in queries[1:]:
                    timing, found = await timed_search(runtime, owner, query)
                    warm.append(timing)
                    top10[query] = _top(found)
            backend = (await backend_seconds(url, datname) - before) / max(1, len(queries) - 1)
            return PathFigures(
                cold,
                warm,
                backend,
                runtime.search.index.nbytes / 1024**2,
                loaded.prefiltered is not None,
                top10,
                resident_mb(),
                collections,
            )


@contextlib.contextmanager
def full_collections() -> Iterator[list[float]]:
    """The wall seconds of each full (generation 2) garbage collection made inside."""
    found: list[float] = []
    started = 0.0

    def watch(phase: str, info: dict[str, int]) -> None:
        nonlocal started
        if info["generation"] != 2:
            return
        if phase == "start":
            started = time.perf_counter()
        else:
            found.append(time.perf_counter() - started)

    gc.callbacks.append(watch)
    try:
        yield found
    finally:
        gc.callbacks.remove(watch)


async def embed_candidates(runtime: Runtime, owner: Owner, queries: list[str]) -> int:
    """Give the local model the vectors of each query's candidates (the prefilter's shortlist,
    as the search hands it over) through its ``warm()``, as the background warm-up would have
    by then; then empty the chunk cache that reading them filled. How many were embedded."""
    engine = runtime.search
    reranker = engine.reranker
    assert isinstance(reranker, WarmableReranker), "--warm-vectors needs --reranker local"
    embedded = 0
    for query in queries:
        async with runtime.pool.connection() as conn:
            loaded = await engine.load(conn, owner.project_id, query=query)
        assert loaded.prefiltered is not None, "--warm-vectors measures the prefiltered path"
        chunked = engine.index.chunked_documents(
            loaded.refs, add=loaded.documents, languages=loaded.languages
        )
        by_id = {document.ref.id: document for document in chunked}
        passages = [
            by_id[passage.document_id].reader_passage(passage.ordinal)
            for passage in loaded.prefiltered.passages
        ]
        embedded += await asyncio.to_thread(reranker.warm, passages)
    engine.index.clear()
    return embedded


def resident_mb(pid: int | str = "self", field: str = "VmRSS") -> float:
    """A process's resident set size (``VmRSS``; ``VmHWM``: its peak), in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _top(found: ProjectSearch) -> list[str]:
    return [hit.chunk_id for hit in found.result.hits[:10]]


def kept_share(exact: dict[str, list[Any]], other: dict[str, list[Any]]) -> float:
    shares = [len(set(exact[q]) & set(other[q])) / len(exact[q]) for q in exact if exact[q]]
    return statistics.mean(shares) if shares else 1.0


def p(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) * 1000


async def cost(
    sizes: Sequence[int],
    query_count: int,
    chunk_size: int,
    reuse: bool,
    per_document: int,
    *,
    bulk: bool = False,
    exhaustive_up_to: int = 10**9,
    reranker: str = "none",
    warm_vectors: bool = False,
) -> None:
    abstracts = load_abstracts(SCIFACT_DIR)
    queries = load_queries(SCIFACT_DIR, query_count + 1)
    rows = []
    for size in sizes:
        datname = f"shortlist_bench_prefilter_{size}_{per_document}"
        url = database_url(datname)
        with tempfile.TemporaryDirectory() as data_dir:
            prepared = reuse and _exists(datname)
            documents = (
                []
                if prepared
                else corpus(abstracts, size, chunk_size, per_document=per_document, per_page=1)
            )
            if not prepared:
                url = fresh_database(datname)
            settings = settings_for(url, Path(data_dir))
            async with open_runtime(settings, background=False) as runtime:
                if not prepared and bulk:
                    owner = await new_project(url, "bench")
                    loaded = await asyncio.to_thread(
                        bulk_load, url, owner.project_id, documents, runtime.search.index
                    )
                    ingest = loaded.seconds
                elif not prepared:
                    owner = await new_project(url, "bench")
                    await add_documents(url, owner.project_id, documents)
                    started = time.perf_counter()
                    while await prefilter.backfill(runtime, batch=64):
                        pass
                    ingest = time.perf_counter() - started
                    await vacuum(url)
                else:
                    owner = await existing_project(url)
                    ingest = float("nan")
                    while await prefilter.backfill(runtime, batch=256):
                        pass  # what a newer schema adds to the rows, as the worker fills it
                async with runtime.pool.connection() as conn:
                    covered = await prefilter.stats(
                        conn, runtime.search.index.terms_config, owner.project_id, None
                    )
        print(
            f"{size}: {covered.passages} passages stored, terms in {ingest:.0f} s", file=sys.stderr
        )
        del documents
        exhaustive = None
        if covered.passages <= exhaustive_up_to and not warm_vectors:
            exhaustive = await run_path(
                url,
                datname,
                owner,
                queries,
                reranker=reranker,
                prefilter_min_passages=10**9,
                cache_max_mb=16384,
            )
            assert not exhaustive.prefiltered
            print(f"{size}: exhaustive measured", file=sys.stderr)
        every = (
            None
            if warm_vectors
            else await run_path(
                url,
                datname,
                owner,
                queries,
                reranker=reranker,
                prefilter_min_passages=1,
                prefilter_term_depth=0,
            )
        )
        filtered = await run_path(
            url,
            datname,
            owner,
            queries,
            warm_vectors=warm_vectors,
            reranker=reranker,
            prefilter_min_passages=1,
        )
        print(f"{size}: prefiltered measured", file=sys.stderr)
        assert (every is None or every.prefiltered) and filtered.prefiltered
        rows.append(
            (size, covered.passages, covered.documents, ingest, exhaustive, every, filtered)
        )

    print(f"Command: `python -m bench.prefilter {' '.join(sys.argv[1:])}`")
    warmed = " (each claim's candidates embedded before it was timed)" if warm_vectors else ""
    print(
        f"{query_count} warm SciFact claims after one cold one, reranker {reranker}{warmed}, "
        "top 10; "
        f"load average {' '.join(f'{v:.1f}' for v in os.getloadavg())} on {os.cpu_count()} CPUs, "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
    )
    print(
        "| passages | documents | path | cold wall (ms) | cold CPU (ms) | warm p50 wall (ms) "
        "| warm p95 wall (ms) | warm CPU p50 (ms) | warm CPU p95 (ms) | database CPU / query (ms) "
        "| chunk cache (MB) | process RSS (MB) | exact top 10 kept "
        "| full collections: count, longest (ms) |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for _, passages, count, ingest, exhaustive, every, filtered in rows:
        exact = exhaustive or every  # the same shortlist: tests/integration/search
        paths = (
            ("exhaustive", exhaustive),
            ("prefiltered, every posting", every),
            ("prefiltered", filtered),
        )
        for name, figures in paths:
            if figures is None:
                print(f"| {passages:,} | {count:,} | {name} | not measured |||||||||||")
                continue
            walls = [t.wall for t in figures.warm]
            cpus = [t.cpu for t in figures.warm]
            kept = f"{kept_share(exact.top10, figures.top10):.3f}" if exact else "–"
            pauses = figures.full_collections
            longest = f"{max(pauses) * 1000:,.0f}" if pauses else "–"
            print(
                f"| {passages:,} | {count:,} | {name} | {figures.cold.wall * 1000:,.0f} "
                f"| {figures.cold.cpu * 1000:,.0f} | {p(walls, 50):,.1f} | {p(walls, 95):,.1f} "
                f"| {p(cpus, 50):,.1f} | {p(cpus, 95):,.1f} "
                f"| {figures.backend_cpu_per_query * 1000:,.1f} "
                f"| {figures.cache_mb:,.0f} | {figures.rss_mb:,.0f} | {kept} "
                f"| {len(pauses)}, {longest} |"
            )
        print(
            f"\nTerms of {passages:,} passages written by "
            f"{'the bench-only bulk loader' if bulk else 'the backfill'} in {ingest:.0f} s "
            f"({count / ingest if ingest == ingest else float('nan'):.0f} documents/s).",
            file=sys.stderr,
        )


async def vacuum(url: str) -> None:
    """What autovacuum does shortly after a bulk load (``lexical_postings`` asks it to after
    every 2 % of new rows): set the visibility map and the planner's statistics."""
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await conn.execute("VACUUM ANALYZE")


def _exists(datname: str) -> bool:
    with psycopg.connect(database_url("postgres"), autocommit=True) as admin:
        return (
            admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (datname,)).fetchone()
            is not None
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--chunk-size", type=int, default=1200)
    parser.add_argument("--reuse", action="store_true", help="keep a database an earlier run made")
    parser.add_argument(
        "--abstracts-per-document", type=int, default=4, help="one abstract a page (default 4)"
    )
    parser.add_argument(
        "--bulk",
        action="store_true",
        help="write documents and terms with bench/bulk_load.py (COPY), not the product's backfill",
    )
    parser.add_argument(
        "--exhaustive-up-to",
        type=int,
        default=10**9,
        help="measure the exhaustive path only up to this many passages",
    )
    parser.add_argument(
        "--reranker",
        choices=("none", "local"),
        default="none",
        help="the searches' reranker: none, or the local model (the default with no Cohere key)",
    )
    parser.add_argument(
        "--warm-vectors",
        action="store_true",
        help="with --reranker local: the prefiltered path only, each claim's candidates "
        "embedded before it is timed (a warm service)",
    )
    parser.add_argument("--quality", action="store_true")
    parser.add_argument("--skip-scifact", action="store_true", help="--quality: the dev set only")
    parser.add_argument("--skip-dev", action="store_true", help="--quality: SciFact only")
    args = parser.parse_args(argv)
    if args.quality:
        from bench.prefilter_quality import quality

        asyncio.run(quality(scifact_too=not args.skip_scifact, dev_too=not args.skip_dev))
    else:
        asyncio.run(
            cost(
                args.sizes,
                args.queries,
                args.chunk_size,
                args.reuse,
                args.abstracts_per_document,
                bulk=args.bulk,
                exhaustive_up_to=args.exhaustive_up_to,
                reranker=args.reranker,
                warm_vectors=args.warm_vectors,
            )
        )


if __name__ == "__main__":
    main()
