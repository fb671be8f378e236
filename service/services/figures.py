"""A document's figures as stored (``documents.figures``), and which figure a passage is beside.

Extraction finds each PDF page's figures (:mod:`extract.figures`) and they are saved with the
document, boxes and captions only. A figure is named by its number in the document (1-based,
in page order) and drawn like a page image cropped to its box
(``GET /api/documents/{id}/pages/{n}/image?figure=K``). A search result sits beside a figure
when it holds the figure's caption, or names its label ("Figure 3", "Fig. 3") on the figure's
page (:func:`figure_beside`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple
from uuid import UUID

from psycopg.types.json import Jsonb

from extract.types import Figure
from extract.wire import from_wire, to_wire
from retrieval.types import Hit
from service.storage.db import Connection, fetch_all

CAPTION_PREFIX_CHARS = 40
"""Letters and digits of a caption's start a passage must hold to count as its caption."""

_LABEL_NUMBER = re.compile(r"(\d{1,3}[a-z]?)$")


class NumberedFigure(NamedTuple):
    """A figure and its number in its document (1-based)."""

    number: int
    figure: Figure


def stored(figures: Sequence[Figure]) -> Jsonb:
    """The figures as the ``figures`` column holds them."""
    return Jsonb(to_wire(list(figures)))


def loaded(value: Any) -> list[Figure]:
    """The ``figures`` column read back (what was stored is checked as it is read)."""
    return from_wire(value or [], list[Figure], "figure list")


async def figures_of(conn: Connection, document_ids: Iterable[UUID]) -> dict[str, list[Figure]]:
    """The figures of those of ``document_ids`` that have any, by document id."""
    wanted = list(dict.fromkeys(document_ids))
    if not wanted:
        return {}
    rows = await fetch_all(conn, "fetch_document_figures", document_ids=wanted)
    return {str(row["id"]): loaded(row["figures"]) for row in rows}


def _fold(text: str) -> str:
    folded = unicodedata.normalize("NFKC", text).casefold()
    return "".join(char for char in folded if char.isalnum())


def _mentions(text: str, label: str) -> bool:
    """Whether ``text`` names the figure ``label`` ("Figure 3"): "Figure 3", "Fig. 3", "Figs. 3"."""
    numbers = _LABEL_NUMBER.findall(label)
    if not numbers:
        return False
    pattern = rf"\bfig(?:ure|s|\.)?\.?\s*{re.escape(numbers[0])}(?![\w])"
    return bool(re.findall(pattern, text, re.IGNORECASE))


def figure_beside(hit: Hit, figures: Sequence[Figure]) -> NumberedFigure | None:
    """The figure a result is, or sits beside: one on the result's pages whose caption it
    holds, else one there whose label it names; None when there is none."""
    first, last = hit.pages
    here = [
        NumberedFigure(number, figure)
        for number, figure in enumerate(figures, start=1)
        if first <= figure.page <= last
    ]
    if not here:
        return None
    text = _fold(hit.text)
    for numbered in here:
        start = _fold(numbered.figure.caption)[:CAPTION_PREFIX_CHARS]
        if len(start) >= 8 and start in text:
            return numbered
    for numbered in here:
        if numbered.figure.label and _mentions(hit.text, numbered.figure.label):
            return numbered
    return None


def beside_hits(
    hits: Sequence[Hit], figures: Mapping[str, Sequence[Figure]]
) -> dict[str, NumberedFigure]:
    """The figure each result sits beside, by chunk id (results beside none left out)."""
    found: dict[str, NumberedFigure] = {}
    for hit in hits:
        numbered = figure_beside(hit, figures.get(hit.document_id, ()))
        if numbered is not None:
            found[hit.chunk_id] = numbered
    return found
