"""An in-memory LRU of passage vectors, bounded by entry count and bytes. Never persisted."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

Vector = npt.NDArray[np.float32]


class VectorCache:
    """Maps ``(model_id, passage_key)`` to a vector; thread-safe.

    Evicts least recently used entries once either bound is exceeded.
    """

    def __init__(self, *, max_entries: int, max_bytes: int) -> None:
        if max_entries < 1 or max_bytes < 1:
            raise ValueError("max_entries and max_bytes must be positive")
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: OrderedDict[tuple[str, str], Vector] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.evictions = 0
        """Entries dropped to stay within bounds since start: a warm-up that finished before
        this last changed may no longer be warm."""

    def __len__(self) -> int:
        with self._lock:
            return len(self._entries)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return self._bytes

    def get_many(self, model_id: str, keys: Iterable[str]) -> dict[str, Vector]:
        """The cached vectors among ``keys`` (marking them recently used)."""
        found: dict[str, Vector] = {}
        with self._lock:
            for key in keys:
                vector = self._entries.get((model_id, key))
                if vector is not None:
                    self._entries.move_to_end((model_id, key))
                    found[key] = vector
        return found

    def missing(self, model_id: str, keys: Iterable[str]) -> list[str]:
        """Those of ``keys`` not cached, without marking the others used (for a warm-up)."""
        with self._lock:
            return [key for key in keys if (model_id, key) not in self._entries]

    def put_many(self, model_id: str, items: Iterable[tuple[str, Vector]]) -> None:
        with self._lock:
            for key, vector in items:
                old = self._entries.pop((model_id, key), None)
                if old is not None:
                    self._bytes -= old.nbytes
                self._entries[(model_id, key)] = vector
                self._bytes += vector.nbytes
            while self._entries and (
                len(self._entries) > self.max_entries or self._bytes > self.max_bytes
            ):
                _, evicted = self._entries.popitem(last=False)
                self._bytes -= evicted.nbytes
                self.evictions += 1
