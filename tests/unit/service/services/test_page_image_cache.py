"""The drawn-page cache keeps within its byte bound, least recently used out first."""

from __future__ import annotations

from typing import NamedTuple

from service.services.page_image_cache import ByteBoundCache


class Blob(NamedTuple):
    nbytes: int


def test_the_least_recently_used_go_first_and_the_bound_holds() -> None:
    cache: ByteBoundCache[str, Blob] = ByteBoundCache(100)
    cache.put("a", Blob(40))
    cache.put("b", Blob(40))
    assert cache.get("a") == Blob(40)  # a is now the most recently used
    cache.put("c", Blob(40))
    assert cache.get("b") is None
    assert cache.get("a") == Blob(40) and cache.get("c") == Blob(40)
    assert cache.nbytes == 80 <= cache.max_bytes


def test_a_value_larger_than_the_bound_is_not_kept_and_a_zero_bound_keeps_none() -> None:
    cache: ByteBoundCache[str, Blob] = ByteBoundCache(100)
    cache.put("huge", Blob(101))
    assert cache.get("huge") is None and len(cache) == 0
    none: ByteBoundCache[str, Blob] = ByteBoundCache(0)
    none.put("a", Blob(1))
    assert len(none) == 0


def test_putting_a_key_again_replaces_its_size() -> None:
    cache: ByteBoundCache[str, Blob] = ByteBoundCache(100)
    cache.put("a", Blob(60))
    cache.put("a", Blob(10))
    assert cache.nbytes == 10
