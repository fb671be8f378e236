"""Comparison questions ("compare X and Y", "how does A differ from B"): evidence from each side.

A ranking by one relevance score tends to fill the top of a comparison with
the side that has more (or wordier) passages. When the query reads as a
comparison, :func:`comparison_sides` names its two sides, and
:func:`balance_sides` reorders the ranked passages so that the two sides take
turns, each in its own rank order, the way a round-robin merge of per-aspect
rankings does (as in aspect-based diversification, Santos, Macdonald & Ounis,
"Exploiting query reformulations for web search result diversification",
WWW 2010, reduced to two explicit aspects). Passages that speak to both sides
count for both; passages that speak to neither keep their place after them.
For such a query the order of the hits is the ranking; their ``score`` values
(each passage's own) need not descend.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

_SIDE = r"(?P<a>.+?)\s+(?:and|with|to|against|vs\.?|versus|from)\s+(?P<b>.+)"
_PATTERNS = (
    re.compile(rf"\bcompar(?:e|ing|ison\s+of)\s+{_SIDE}", re.IGNORECASE),
    re.compile(
        r"\b(?:differences?|distinction|contrast)\s+between\s+(?P<a>.+?)\s+and\s+(?P<b>.+)",
        re.IGNORECASE,
    ),
    re.compile(
        r"\bhow\s+(?:does|do|did|is|are)\s+(?P<a>.+?)\s+(?:differ|compare|contrast)\s+"
        r"(?:from|to|with|against)\s+(?P<b>.+)",
        re.IGNORECASE,
    ),
    re.compile(r"^(?P<a>.+?)\s+(?:vs\.?|versus)\s+(?P<b>.+)$", re.IGNORECASE),
)
_TRAILING = re.compile(r"[\s?.!,;:]+$")
SIDE_COVERAGE = 0.5
"""A passage speaks to a side when it covers this share of the side's terms (IDF-weighted)."""


def comparison_sides(query: str) -> tuple[str, str] | None:
    """The two things a comparison question compares, or ``None`` for any other query."""
    for pattern in _PATTERNS:
        match = pattern.search(query.strip())
        if match:
            a, b = (_TRAILING.sub("", match.group(name)).strip() for name in ("a", "b"))
            if a and b and a.casefold() != b.casefold():
                return a, b
    return None


def balance_sides(
    order: Sequence[int], side_a: Sequence[float], side_b: Sequence[float]
) -> list[int]:
    """``order`` (candidate positions, best first) with the two sides taking turns.

    ``side_a[i]`` / ``side_b[i]`` is candidate ``i``'s coverage of each side's
    terms. Unchanged unless each side has a passage of its own.
    """
    speaks_a = [side_a[i] >= SIDE_COVERAGE for i in range(len(side_a))]
    speaks_b = [side_b[i] >= SIDE_COVERAGE for i in range(len(side_b))]
    only_a = [i for i in order if speaks_a[i] and not speaks_b[i]]
    only_b = [i for i in order if speaks_b[i] and not speaks_a[i]]
    if not only_a or not only_b:
        return list(order)
    both = [i for i in order if speaks_a[i] and speaks_b[i]]
    turns: list[int] = []
    queues = [[*only_a], [*only_b]]
    rank = {index: position for position, index in enumerate(order)}
    pending_both = list(both)
    side = 0 if rank[only_a[0]] <= rank[only_b[0]] else 1
    while queues[0] or queues[1] or pending_both:
        # A passage on both sides goes first when it outranks the side whose turn it is.
        queue = queues[side]
        if pending_both and (not queue or rank[pending_both[0]] < rank[queue[0]]):
            turns.append(pending_both.pop(0))
            continue
        if queue:
            turns.append(queue.pop(0))
        side = 1 - side
    placed = set(turns)
    return turns + [i for i in order if i not in placed]
