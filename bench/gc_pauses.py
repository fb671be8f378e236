"""How long a full garbage collection holds a serving process, as its chunk cache fills.

Run from the repository root::

    .venv/bin/python -m bench.gc_pauses                    # 64, 256 and 512 MB of cache
    .venv/bin/python -m bench.gc_pauses --sizes 512 --repeat 5

CPython's cyclic collector holds the interpreter for a whole full collection, so every search
running then waits for it, and a full collection walks every container object the collector
tracks. This bench imports the service (its modules, classes and functions: what start-up
makes), fills a :class:`~retrieval.ChunkIndex` with chunked documents as prefiltered searches
leave them (SciFact abstracts, four a document and one a page, as ``bench/prefilter.py`` lays
them out) up to each size, and times full collections (``gc.collect()``), first with
start-up's objects walked as well, then with them frozen as the served app does
(:func:`service.heap.freeze_startup_objects`). The table gives the objects walked and the
median collection of ``--repeat``.
"""

from __future__ import annotations

import argparse
import gc
import platform
import statistics
import time
from collections.abc import Sequence
from itertools import islice

from bench.latency import SCIFACT_DIR, documents, load_abstracts
from retrieval.index import ChunkIndex

MB = 1024 * 1024
BATCH = 500
"""Documents added to the cache at a time, as a few searches would."""


def collection_ms(repeat: int) -> float:
    """The median wall time of ``repeat`` full collections, in milliseconds."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        gc.collect()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def fill_and_time(sizes: Sequence[int], repeat: int) -> list[tuple[int, int, int, float]]:
    """Per size (MB), a cache filled to it: documents cached, objects the collector walks, and
    the median full collection (ms)."""
    stream = documents(load_abstracts(SCIFACT_DIR), per_document=4, per_page=1)
    index = ChunkIndex(max_bytes=2 * max(sizes) * MB)  # filled, never evicting
    rows = []
    for size in sorted(sizes):
        while index.nbytes < size * MB:
            batch = list(islice(stream, BATCH))
            index.chunked_documents([doc.ref for doc in batch], add=batch)
        gc.collect()
        rows.append((size, len(index), len(gc.get_objects()), collection_ms(repeat)))
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 512], help="MB")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import service.app  # noqa: F401  # what a serving process has imported by the time it serves

    walked = fill_and_time(args.sizes, args.repeat)
    gc.collect()  # the first cache is gone; what is left is start-up's
    gc.freeze()
    frozen = fill_and_time(args.sizes, args.repeat)

    print(f"Command: `python -m bench.gc_pauses --sizes {' '.join(map(str, args.sizes))}`")
    print(f"Python {platform.python_version()}, median of {args.repeat} full collections")
    print()
    print(
        "| cache (MB) | documents cached | objects walked | full collection (ms) "
        "| walked, start-up frozen | full collection, start-up frozen (ms) |"
    )
    print("|---:|---:|---:|---:|---:|---:|")
    for (size, cached, objects, ms), (_, _, objects_frozen, ms_frozen) in zip(
        walked, frozen, strict=True
    ):
        print(
            f"| {size} | {cached:,} | {objects:,} | {ms:.0f} | {objects_frozen:,} "
            f"| {ms_frozen:.0f} |"
        )


if __name__ == "__main__":
    main()
