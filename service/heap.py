"""Start-up's objects set aside from the garbage collector's full passes.

CPython's cyclic garbage collector holds the interpreter for the whole of a full collection,
and a full collection walks every container object it tracks, so every search running then
waits for it. A serving process tracks two kinds: what start-up made (modules, classes,
functions, the app, settings: well over 100,000 objects) and what it caches for searches
(chunked documents). Start-up's objects live as long as the process, so walking them again at
each full collection is pure cost: with a full chunk cache (512 MB), a full collection walked
304,256 objects in 179 ms, and 144,523 in 89 ms once they were frozen (``bench/gc_pauses.py``).

:func:`freeze_startup_objects` moves them to the collector's permanent generation
(:func:`gc.freeze`), once per process: the served app calls it once it has started, and
``shortlist mcp`` before it answers its first call. A frozen object still goes when nothing refers to it;
only a reference cycle among frozen objects that later becomes garbage would stay, and what
start-up made is the process's for its lifetime.
"""

from __future__ import annotations

import gc
import threading

_lock = threading.Lock()
_frozen = False


def freeze_startup_objects() -> int:
    """Collect what start-up left over, then freeze every object alive now; the number of
    objects frozen, or 0 once a process has done it before (later objects are the work of
    requests and caches, which the collector must keep walking)."""
    global _frozen
    with _lock:
        if _frozen:
            return 0
        _frozen = True
        gc.collect()
        gc.freeze()
        return gc.get_freeze_count()
