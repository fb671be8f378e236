"""A small circuit breaker: stop calling a failing service for a while.

After ``failure_threshold`` consecutive failures the circuit opens and calls are
skipped for ``cooldown`` seconds. Then one call is let through (half-open): a
success closes the circuit, a failure opens it again for another cooldown.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Literal

CircuitState = Literal["closed", "open", "half_open"]


class CircuitBreaker:
    """Counts consecutive failures; thread-safe."""

    def __init__(
        self,
        *,
        failure_threshold: int,
        cooldown: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if failure_threshold < 1:
            raise ValueError("failure_threshold must be at least 1")
        if cooldown < 0:
            raise ValueError("cooldown must not be negative")
        self.failure_threshold = failure_threshold
        self.cooldown = cooldown
        self._clock = clock
        self._lock = threading.Lock()
        self._consecutive_failures = 0
        self._opened_at: float | None = None

    @property
    def consecutive_failures(self) -> int:
        with self._lock:
            return self._consecutive_failures

    @property
    def state(self) -> CircuitState:
        """``closed`` (calls go ahead), ``open`` (calls skipped) or ``half_open`` (the
        cooldown is over: the next call decides)."""
        with self._lock:
            if self._opened_at is None:
                return "closed"
            return "open" if self._clock() < self._opened_at + self.cooldown else "half_open"

    def seconds_until_retry(self) -> float:
        """0 when a call may go ahead; otherwise how long the circuit stays open."""
        with self._lock:
            if self._opened_at is None:
                return 0.0
            return max(0.0, self._opened_at + self.cooldown - self._clock())

    def record_success(self) -> None:
        with self._lock:
            self._consecutive_failures = 0
            self._opened_at = None

    def record_failure(self) -> None:
        with self._lock:
            self._consecutive_failures += 1
            if self._consecutive_failures >= self.failure_threshold:
                self._opened_at = self._clock()
