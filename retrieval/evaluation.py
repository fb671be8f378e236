"""Scores for labelled questions: the harness behind ``bench/quality.py`` and ``shortlist eval``.

A labelled question names the document that answers it and the pages (1-based
PDF pages; a page of any other kind of document is its ``<!-- page N -->``
marker), *any* of which answers it; or it says nothing in the searched
documents answers it (``"answerable": false``). One JSON object a line::

    {"question": "How many tracks does it record?", "document": "linn.pdf", "pages": [1]}
    {"question": "What is its warranty period?", "answerable": false}

with an optional ``kind`` (any label, for a per-kind breakdown). Other fields
are ignored, so a file can carry its own notes (the development set carries
``language``, ``fold`` and ``near``).

Scores, over one search result per question:

* **hit@k** (k in :data:`CUTOFFS`): the share of answerable questions for which
  one of the first k passages is from the right document and its page range
  touches one of the right pages (the passage's own pages: a folded near-copy
  does not count);
* **false flags**: the share of answerable questions the verdict
  (``insufficient_evidence``) wrongly says the documents do not answer;
* **unanswerable flagged**: the share of unanswerable questions it rightly flags.

Pure: parsing text and counting; searching is the caller's business.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from retrieval.errors import InvalidLabel
from retrieval.types import Hit, SearchResult

CUTOFFS: tuple[int, ...] = (1, 3, 10)
"""The k of hit@k; a search for scoring must return at least ``max(CUTOFFS)`` passages."""

TOP_K = max(CUTOFFS)


class LabelledQuestion(NamedTuple):
    """A question and where its answer is."""

    question: str
    document: str | None
    """The answering document (an id or a name, as the caller matches hits); ``None`` when
    nothing answers the question."""
    pages: tuple[int, ...] = ()
    """1-based pages, any of which answers it; empty when unanswerable."""
    kind: str = ""
    line: int = 0
    """The line of the file it was read from (0: not read from a file)."""

    @property
    def answerable(self) -> bool:
        return self.document is not None


def parse_line(text: str, line: int) -> LabelledQuestion | None:
    """One line of a labelled-questions file; ``None`` for a blank line.

    Raises:
        InvalidLabel: the line is not JSON, or not a labelled question (naming ``line``).
    """
    if not text.strip():
        return None
    try:
        row = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidLabel(line, f"not JSON ({error.msg})") from None
    if not isinstance(row, dict):
        raise InvalidLabel(line, "expected a JSON object")
    return from_mapping(row, line)


def from_mapping(row: Mapping[str, object], line: int) -> LabelledQuestion:
    """A labelled question from a decoded JSON object (``line`` names it in errors)."""
    question = row.get("question")
    if not isinstance(question, str) or not question.strip():
        raise InvalidLabel(line, '"question" must be a non-empty string')
    kind = row.get("kind", "")
    if not isinstance(kind, str):
        raise InvalidLabel(line, '"kind" must be a string')
    answerable = row.get("answerable", True)
    if not isinstance(answerable, bool):
        raise InvalidLabel(line, '"answerable" must be true or false')
    document = row.get("document")
    pages = row.get("pages")
    if not answerable:
        if document is not None or pages:
            raise InvalidLabel(line, 'an unanswerable question ("answerable": false) names no '
                             '"document" or "pages"')  # fmt: skip
        return LabelledQuestion(question.strip(), None, (), kind, line)
    if not isinstance(document, str) or not document.strip():
        raise InvalidLabel(
            line, '"document" must name the answering document (or set "answerable": false)'
        )
    if (
        not isinstance(pages, list)
        or not pages
        or not all(isinstance(p, int) and not isinstance(p, bool) and p >= 1 for p in pages)
    ):
        raise InvalidLabel(line, '"pages" must be a non-empty list of page numbers (1, 2, …)')
    return LabelledQuestion(question.strip(), document, tuple(sorted(set(pages))), kind, line)


def parse_lines(lines: Iterable[str]) -> list[LabelledQuestion]:
    """Every labelled question of a file's lines (blank lines skipped).

    Raises:
        InvalidLabel: for the first bad line, naming it (1-based).
    """
    parsed = (parse_line(text, number) for number, text in enumerate(lines, 1))
    return [question for question in parsed if question is not None]


def parse_file(data: bytes) -> list[LabelledQuestion]:
    """Every labelled question of a file's bytes (UTF-8, one JSON object a line).

    Raises:
        InvalidLabel: for the first bad line, naming it (1-based), a line that is not
            UTF-8 text included.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidLabel(data[: error.start].count(b"\n") + 1, "not UTF-8 text") from None
    return parse_lines(text.splitlines())


class Outcome(NamedTuple):
    """How one search did on one labelled question."""

    question: LabelledQuestion
    rank: int | None
    """1-based rank of the first passage on a right page; ``None`` when none was returned
    (always ``None`` for an unanswerable question)."""
    flagged: bool
    """The verdict said the documents do not appear to answer it."""

    def hit(self, k: int) -> bool:
        return self.rank is not None and self.rank <= k


def answering_rank(question: LabelledQuestion, hits: Sequence[Hit]) -> int | None:
    """1-based rank of the first hit from ``question.document`` touching one of its pages."""
    if question.document is None:
        return None
    for rank, hit in enumerate(hits, 1):
        first, last = hit.pages
        if hit.document_id == question.document and any(
            first <= page <= last for page in question.pages
        ):
            return rank
    return None


def outcome(question: LabelledQuestion, result: SearchResult) -> Outcome:
    """Score one search result (its hits' ``document_id`` compared with ``question.document``)."""
    return Outcome(question, answering_rank(question, result.hits), result.insufficient_evidence)


class Scores(NamedTuple):
    """Scores over a set of outcomes; a share is ``nan`` when it has nothing to count."""

    answerable: int
    unanswerable: int
    hit_at: dict[int, float]
    """``{k: share of answerable questions hit at k}`` for each k of :data:`CUTOFFS`."""
    false_flags: float
    """Share of answerable questions the verdict flagged."""
    unanswerable_flagged: float
    """Share of unanswerable questions the verdict flagged."""

    def to_dict(self) -> dict[str, object]:
        """Plain JSON-ready values (``null`` for a share with nothing to count)."""

        def share(value: float) -> float | None:
            return None if math.isnan(value) else round(value, 4)

        return {
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            **{f"hit_at_{k}": share(v) for k, v in self.hit_at.items()},
            "false_flags": share(self.false_flags),
            "unanswerable_flagged": share(self.unanswerable_flagged),
        }


def _share(values: Sequence[bool]) -> float:
    return sum(values) / len(values) if values else math.nan


def score(outcomes: Sequence[Outcome]) -> Scores:
    """hit@k, false flags and unanswerable flagged over ``outcomes``."""
    present = [o for o in outcomes if o.question.answerable]
    absent = [o for o in outcomes if not o.question.answerable]
    return Scores(
        answerable=len(present),
        unanswerable=len(absent),
        hit_at={k: _share([o.hit(k) for o in present]) for k in CUTOFFS},
        false_flags=_share([o.flagged for o in present]),
        unanswerable_flagged=_share([o.flagged for o in absent]),
    )


def score_by_kind(outcomes: Sequence[Outcome]) -> dict[str, Scores]:
    """:func:`score` for each ``kind`` (in order of first appearance)."""
    kinds: dict[str, list[Outcome]] = {}
    for item in outcomes:
        kinds.setdefault(item.question.kind, []).append(item)
    return {kind: score(items) for kind, items in kinds.items()}
