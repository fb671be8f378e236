"""Per-token request budgets: a token bucket per (token, action), in process memory.

Each API replica keeps its own buckets, so with N replicas behind a load
balancer a token's effective budget is at most N times the setting; that is
the documented trade for keeping the service stateless between requests.
"""

from __future__ import annotations

import math
import threading
import time
from collections import OrderedDict

from service.errors import RateLimited

_MAX_BUCKETS = 100_000


class RateLimiter:
    """``check(key)`` spends one unit or raises RateLimited with a Retry-After."""

    def __init__(self, per_minute: int) -> None:
        self.capacity = float(per_minute)
        self.refill_per_second = per_minute / 60.0
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, key: str) -> None:
        if self.capacity <= 0:
            return
        now = time.monotonic()
        with self._lock:
            tokens, stamp = self._buckets.pop(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - stamp) * self.refill_per_second)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                retry_after = math.ceil((1.0 - tokens) / self.refill_per_second)
                raise RateLimited(retry_after, f"Too many requests; retry in {retry_after} s.")
            self._buckets[key] = (tokens - 1.0, now)
            while len(self._buckets) > _MAX_BUCKETS:
                self._buckets.popitem(last=False)
