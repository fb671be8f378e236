"""Cold-start search: latency and quality right after ingest, right after a restart, and warm.

Through the product: :func:`service.runtime.open_runtime` on a fresh PostgreSQL
database (migrated as the service does), the real :class:`SearchEngine`, its
background :class:`~service.services.warmup.Warmup` and the local reranker on
the default settings. SciFact abstracts are written to the ``documents`` table
as ready page-marked Markdown (extraction is not what is measured here).

``--docs N`` takes every document relevant to the first ``--queries`` SciFact
**train** queries, then fills up to N in corpus order; those queries are asked
(top 10, nDCG@10 over documents) in three phases:

(a) **right after ingest**: every document has just been announced ready, as
    ``follow_ready_documents`` announces them, so the warm-up has a backlog of
    "upload" jobs; the queries start at once;
(b) **right after a restart**: a new runtime (empty caches) queues the recent
    documents as start-up does, and the queries start at once;
(c) **warm**: after the warm-up has finished.

It also reports how long (b)'s warm-up took to finish and the CPU it spent
per 100 passages. The machine is shared: CPU seconds are this process's own
(``getrusage``), wall times are what a user would have seen. From the
repository root, with a PostgreSQL server (``DATABASE_URL`` names any database
on it; a scratch database is created and dropped)::

    .venv/bin/python -m bench.cold --docs 1000
    .venv/bin/python -m bench.cold --docs 5183 --skip-warm
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import tempfile
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio.to_thread
import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from bench.quality import Qrels, load_corpus, load_qrels, load_queries, ndcg_at
from retrieval import SourceDocument
from service.records import Principal
from service.runtime import Runtime, open_runtime
from service.services import users
from service.services.search import search_project
from service.settings import Settings


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def pick(docs: int, queries: int) -> tuple[list[SourceDocument], list[str], Qrels]:
    corpus = load_corpus()
    qrels = load_qrels("train")
    texts = load_queries()
    query_ids = [q for q in qrels if q in texts][:queries]
    wanted = {doc for q in query_ids for doc in qrels[q]}
    chosen = [d for d in corpus if d.id in wanted]
    chosen += [d for d in corpus if d.id not in wanted][: max(0, docs - len(chosen))]
    return chosen[:docs] if len(chosen) > docs else chosen, query_ids, qrels


async def ingest(url: str, documents: Sequence[SourceDocument]) -> tuple[str, dict[str, str]]:
    """A user, and the documents as ready rows of their project; (token, row id -> SciFact id)."""
    from psycopg.rows import dict_row

    ids: dict[str, str] = {}
    async with await psycopg.AsyncConnection.connect(
        url, autocommit=True, row_factory=dict_row
    ) as conn:
        created = await users.create_user(conn, "bench")
        for document in documents:
            row = await (
                await conn.execute(
                    "INSERT INTO documents (project_id, name, content_type, size_bytes, status,"
                    " markdown, content_hash, kind, page_count, extracted_at) VALUES"
                    " (%s, %s, 'text/markdown', %s, 'ready', %s, %s, 'text', 1, now())"
                    " RETURNING id",
                    (
                        created.project.id,
                        f"{document.id}.md",
                        len(document.markdown),
                        document.markdown,
                        document.content_hash,
                    ),
                )
            ).fetchone()
            assert row is not None
            ids[str(row["id"])] = document.id
    return created.token, ids


async def ask(
    runtime: Runtime,
    principal: Principal,
    project_id: uuid.UUID,
    query_ids: Sequence[str],
    texts: dict[str, str],
    qrels: Qrels,
    ids: dict[str, str],
) -> dict[str, float]:
    latencies: list[float] = []
    ndcgs: list[float] = []
    unscored = 0
    candidates = 0
    for q in query_ids:
        started = time.monotonic()
        result = (await search_project(runtime, principal, project_id, texts[q], top_k=10)).result
        latencies.append(time.monotonic() - started)
        ranked = list(dict.fromkeys(ids[hit.document_id] for hit in result.hits))
        ndcgs.append(ndcg_at(ranked, qrels[q]))
        unscored += result.unscored
        candidates += result.candidates
    return {
        "first": 1000 * latencies[0],
        "p50": 1000 * statistics.median(latencies),
        "p95": 1000 * _percentile(latencies, 0.95),
        "max": 1000 * max(latencies),
        "ndcg": statistics.fmean(ndcgs),
        "unscored": 100 * unscored / max(1, candidates),
    }


async def run(args: argparse.Namespace) -> None:
    documents, query_ids, qrels = pick(args.docs, args.queries)
    texts = load_queries()
    base = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")
    name = f"shortlist_bench_cold_{uuid.uuid4().hex[:8]}"
    admin = make_conninfo(**{**conninfo_to_dict(base), "dbname": "postgres"})
    url = make_conninfo(**{**conninfo_to_dict(base), "dbname": name})
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    rows: list[tuple[str, dict[str, float]]] = []
    try:
        with tempfile.TemporaryDirectory() as data_dir:
            settings = Settings.model_validate(
                {
                    "database_url": url,
                    "data_dir": Path(data_dir),
                    "search": {"reranker": "local", **args.search},
                    "extraction": {"warm_processes": 0},
                }
            )
            async with open_runtime(settings) as runtime:
                token, ids = await ingest(url, documents)
                async with runtime.pool.connection() as conn:
                    principal = await users.authenticate(conn, token)
                    (project,) = await _projects(conn, principal)
                warmup = runtime.search.warmup
                assert warmup is not None
                # (a) every document was just announced ready, as follow_ready_documents does.
                await _announce(runtime, project)
                rows.append(("(a) right after ingest", await ask(
                    runtime, principal, project, query_ids, texts, qrels, ids)))  # fmt: skip
            async with open_runtime(settings) as runtime:
                warmup = runtime.search.warmup
                assert warmup is not None
                restarted, cpu = time.monotonic(), _cpu()
                await warmup.queue_recent(runtime.pool)
                rows.append(("(b) right after a restart", await ask(
                    runtime, principal, project, query_ids, texts, qrels, ids)))  # fmt: skip
                if not args.skip_warm:
                    await anyio.to_thread.run_sync(warmup.wait_idle, 24 * 3600.0)
                    warm_seconds, warm_cpu = time.monotonic() - restarted, _cpu() - cpu
                    (progress,) = warmup.progress()
                    rows.append(("(c) warm", await ask(
                        runtime, principal, project, query_ids, texts, qrels, ids)))  # fmt: skip
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    print(
        f"{len(documents)} SciFact documents, {len(query_ids)} train queries per phase, "
        f"top 10; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end"
    )
    print("| phase | first ms | p50 ms | p95 ms | max ms | nDCG@10 | candidates unscored |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, row in rows:
        print(
            f"| {label} | {row['first']:.0f} | {row['p50']:.0f} | {row['p95']:.0f} | "
            f"{row['max']:.0f} | "
            f"{row['ndcg']:.3f} | {row['unscored']:.0f} % |"
        )
    if not args.skip_warm:
        print(
            f"\nafter the restart: fully warm in {warm_seconds:.0f} s wall, "
            f"{progress.passages_total} passages, {warm_cpu:.0f} CPU s in this process "
            f"({100 * warm_cpu / max(1, progress.passages_total):.1f} CPU s per 100 passages, "
            "queries included)"
        )


async def _projects(conn: Any, principal: Principal) -> list[uuid.UUID]:
    from service.services import projects

    return [project.id for project in await projects.list_projects(conn, principal.user_id)]


async def _announce(runtime: Runtime, project: uuid.UUID) -> None:
    """Queue every ready document as an "upload", like the ready notifications do."""
    from psycopg.rows import dict_row

    from service.services.warmup import source

    warmup = runtime.search.warmup
    assert warmup is not None
    async with runtime.pool.connection() as conn, conn.cursor(row_factory=dict_row) as cursor:
        await cursor.execute(
            "SELECT id, project_id, name, content_hash, markdown FROM documents"
            " WHERE project_id = %s ORDER BY created_at",
            (project,),
        )
        for row in await cursor.fetchall():
            warmup.want(str(row["project_id"]), "upload", documents=[source(row)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="cold-start search latency and quality")
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--queries", type=int, default=40, help="SciFact train queries per phase")
    parser.add_argument("--skip-warm", action="store_true", help="stop after phase (b)")
    parser.add_argument(
        "--search",
        type=lambda text: dict(item.split("=", 1) for item in text.split(",")),
        default={},
        help="search settings, e.g. local_embed_budget=1.0,warmup_batch=8",
    )
    asyncio.run(run(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
