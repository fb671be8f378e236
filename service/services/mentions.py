"""Mentions: every ready document of a project that contains a word or phrase, counted.

Search returns a top-k sample ranked by relevance; this answers the questions a
sample cannot — "list all", "how many", "is it anywhere?" — exhaustively. A term
matches case-insensitively as an exact substring of the text read the way the SQL
function ``mention_text`` reads it (``sql/018_mention_text.sql``), for the term and
the document alike: NFKC, whitespace collapsed, a word hyphenated at a line end
joined, the extractor's markup (``<br>`` and other tags, ``**``, ``~~``, backticks,
``_emphasis_``) dropped and no space between Chinese or Japanese characters, so a
phrase broken across lines, cells or columns still matches. PostgreSQL scans the Markdown
of every ready document in the project on each call: linear in the project's
text, which is fine at the scale of one person's projects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, NamedTuple, get_args
from uuid import UUID

from service.errors import InvalidRequest
from service.records import Principal, Project
from service.services import documents, projects
from service.storage.db import connection, fetch_all

if TYPE_CHECKING:
    from service.runtime import Runtime

Match = Literal["all", "any"]

MAX_TERMS = 20
MAX_TERM_CHARS = 200


class TermCount(NamedTuple):
    """How often one term occurs in one document, and the pages it is on."""

    term: str
    occurrences: int
    pages: tuple[int, ...]
    """Pages holding the term; an occurrence that straddles a page break is counted but has no page."""


class DocumentMentions(NamedTuple):
    document_id: UUID
    document_name: str
    terms: tuple[TermCount, ...]
    """One entry per searched term, in the order the terms were given."""

    @property
    def total(self) -> int:
        return sum(term.occurrences for term in self.terms)


class TermTotal(NamedTuple):
    term: str
    occurrences: int
    documents: int


class Mentions(NamedTuple):
    project: Project
    terms: tuple[str, ...]
    """The terms as matched: whitespace collapsed (case is ignored when matching)."""
    match: Match
    documents: list[DocumentMentions]
    """Documents that satisfy ``match``, by name."""
    totals: tuple[TermTotal, ...]
    """Per term, over every searched document (not only those listed)."""
    documents_searched: int
    """Ready documents scanned: all of the project's searchable documents."""
    documents_not_searchable: int
    """Documents of the project not scanned because they are pending or failed."""


def normalise_terms(terms: Sequence[str]) -> tuple[str, ...]:
    """Collapse whitespace, drop duplicates (ignoring case), and check the limits."""
    cleaned: list[str] = []
    seen: set[str] = set()
    for raw in terms:
        term = " ".join(raw.split())
        if not term or term.casefold() in seen:
            continue
        if "\x00" in term:
            # No stored text holds NUL, and PostgreSQL refuses it as a parameter.
            raise InvalidRequest("A term may not contain the NUL character.", field="terms")
        if len(term) > MAX_TERM_CHARS:
            raise InvalidRequest(
                f"A term may be at most {MAX_TERM_CHARS} characters; {term[:40]!r}… is {len(term)}.",
                field="terms",
            )
        seen.add(term.casefold())
        cleaned.append(term)
    if not cleaned:
        raise InvalidRequest(
            "Give at least one non-empty word or phrase to look for.", field="terms"
        )
    if len(cleaned) > MAX_TERMS:
        raise InvalidRequest(
            f"At most {MAX_TERMS} terms per call; split the list into several calls.",
            field="terms",
        )
    return tuple(cleaned)


def check_match(match: str) -> Match:
    choices: tuple[Match, ...] = get_args(Match)
    if match not in choices:
        raise InvalidRequest(
            f"match must be one of {', '.join(choices)}, not {match!r}.", field="match"
        )
    return match


async def find_mentions(
    runtime: Runtime,
    principal: Principal,
    project: UUID | str | None,
    terms: Sequence[str],
    match: str = "all",
) -> Mentions:
    """Every ready document of the project containing all (or any) of ``terms``, with counts.

    The one entry point of every door: it spends the token's search budget before any
    connection is taken, checks the terms, and resolves ``project`` (id, name, or
    ``None``) as :func:`projects.resolve_project` does.
    """
    runtime.search_limiter.check(str(principal.token_id))
    cleaned = normalise_terms(terms)
    mode = check_match(match)
    async with connection(runtime.pool) as conn:
        target = await projects.resolve_project(conn, principal.user_id, project)
        rows = await fetch_all(conn, "count_mentions", project_id=target.id, terms=list(cleaned))
    per_document: dict[UUID, list[TermCount]] = {}
    names: dict[UUID, str] = {}
    for row in rows:
        names[row["document_id"]] = row["document_name"]
        per_document.setdefault(row["document_id"], []).append(
            TermCount(cleaned[row["term_index"] - 1], int(row["count"]), tuple(row["pages"]))
        )
    everything = [
        DocumentMentions(document_id, names[document_id], tuple(counts))
        for document_id, counts in per_document.items()
    ]
    wanted = all if mode == "all" else any
    listed = [doc for doc in everything if wanted(term.occurrences > 0 for term in doc.terms)]
    totals = tuple(
        TermTotal(
            term,
            sum(doc.terms[i].occurrences for doc in everything),
            sum(1 for doc in everything if doc.terms[i].occurrences > 0),
        )
        for i, term in enumerate(cleaned)
    )
    return Mentions(
        project=target,
        terms=cleaned,
        match=mode,
        documents=listed,
        totals=totals,
        documents_searched=len(everything),
        documents_not_searchable=documents.not_searchable_count(target, len(everything)),
    )
