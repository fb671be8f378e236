"""How deep the prefilter reads each term's postings, and how many candidates it rescores (#28).

For the databases ``bench/prefilter.py`` made (``shortlist_bench_prefilter_<size>_4``: run it
with ``--bulk`` first), the product's own :func:`service.services.prefilter.shortlist` answers
the same SciFact claims with every posting read (``depth`` 0, the exact BM25 shortlist) and
with each ``DEPTH:RESCORE[:WHOLE]`` setting given (``WHOLE``: postings per rescored candidate
a deep term may add and still be read whole, :data:`prefilter.WHOLE_READ_PROBES` when left
out); per setting, the database round trip's wall-clock median, p95 and mean and the share of
the exact top 10 and top 100 it keeps. From the repository root::

    .venv/bin/python -m bench.prefilter_depth --size 1000000 --pairs 2000:300 10000:1000
    .venv/bin/python -m bench.prefilter_depth --size 100000 --pairs 2000:1000:0 2000:1000:2
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from bench.latency import SCIFACT_DIR, load_queries
from bench.prefilter import database_url, existing_project, kept_share, p, settings_for
from retrieval import Prefiltered
from service.runtime import open_runtime
from service.services import prefilter

LIMIT = 100
"""The shortlist's length (``search.shortlist_keep``'s default)."""


async def sweep(
    size: int, pairs: Sequence[tuple[int, int, int]], query_count: int, skip: int = 0
) -> None:
    url = database_url(f"shortlist_bench_prefilter_{size}_4")
    owner = await existing_project(url)
    claims = load_queries(SCIFACT_DIR, skip + query_count + 1)[skip + 1 :]
    with tempfile.TemporaryDirectory() as data_dir:
        async with open_runtime(settings_for(url, Path(data_dir)), background=False) as runtime:
            index = runtime.search.index
            async with runtime.pool.connection() as conn:
                covered = await prefilter.stats(conn, index.terms_config, owner.project_id, None)

                async def answer(
                    claim: str, depth: int, rescore: int | None, whole_read: int
                ) -> tuple[float, Prefiltered]:
                    started = time.perf_counter()
                    found = await prefilter.shortlist(
                        conn, index, owner.project_id, claim, covered, None,
                        limit=LIMIT, depth=depth, rescore=rescore, whole_read=whole_read,
                    )  # fmt: skip
                    return time.perf_counter() - started, found

                runs: dict[tuple[int, int, int], list[tuple[float, Prefiltered]]] = {}
                for claim in claims:  # each setting right after the exact answer of the claim
                    for pair in [(0, 0, 0), *pairs]:
                        runs.setdefault(pair, []).append(await answer(claim, *pair))
    exact = runs[(0, 0, 0)]
    print(
        f"{size:,} passages ({covered.passages:,} stored), {len(claims)} SciFact claims "
        f"(queries.jsonl's {skip + 2}-{skip + query_count + 1}, all of the train split), "
        f"shortlist {LIMIT}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
    )
    print(
        "| depth per term | rescored | read whole within | median / p95 / mean (ms) "
        "| exact top 10 kept | exact top 100 kept |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for pair, answers in runs.items():
        walls = [wall for wall, _ in answers]  # seconds: p() gives milliseconds
        kept = {
            n: kept_share(
                {c: _ids(e)[:n] for c, (_, e) in zip(claims, exact, strict=True)},
                {c: _ids(a)[:n] for c, (_, a) in zip(claims, answers, strict=True)},
            )
            for n in (10, 100)
        }
        depth, rescore, whole = pair
        label = (
            ("every posting", "–", "–")
            if depth == 0
            else (f"{depth:,}", f"{rescore:,}", f"{whole} a candidate")
        )
        print(
            f"| {' | '.join(label)} | {statistics.median(walls) * 1000:.1f} / {p(walls, 95):.1f}"
            f" / {statistics.mean(walls) * 1000:.1f} | {kept[10]:.3f} | {kept[100]:.3f} |"
        )


def _setting(text: str) -> tuple[int, int, int]:
    """``DEPTH:RESCORE[:WHOLE]`` as numbers, ``WHOLE`` the product's when left out."""
    depth, rescore, *whole = map(int, text.split(":"))
    return depth, rescore, whole[0] if whole else prefilter.WHOLE_READ_PROBES


def _ids(found: Prefiltered) -> list[tuple[str, int]]:
    return [(passage.document_id, passage.ordinal) for passage in found.passages]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=1_000_000, help="the database's --sizes value")
    parser.add_argument("--pairs", nargs="+", default=["2000:300", "10000:1000"],
                        help="DEPTH:RESCORE[:WHOLE] settings")  # fmt: skip
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument(
        "--skip",
        type=int,
        default=0,
        help="claims passed over after the first (0: the 40 the settings were chosen on; "
        "100: a held-out fold)",
    )
    args = parser.parse_args(argv)
    pairs = [_setting(pair) for pair in args.pairs]
    asyncio.run(sweep(args.size, pairs, args.queries, args.skip))


if __name__ == "__main__":
    main()
