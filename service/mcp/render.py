"""What the model reads: compact, citation-annotated text for each tool's result.

Each function returns the text block of a tool result; the structured part
(ids, pages, scores) is built next to it in :mod:`service.mcp.tools`. Passage
text appears once, here, and never in the structured part.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from retrieval import SearchResult
from retrieval.citations import near_copies_note, no_match_note, ranking_note
from service.records import Document, Project
from service.services.documents import ocr_note, unsearchable_reason
from service.services.mentions import Mentions
from service.services.search import ProjectSearch

RETRY_HINT = (
    "Try again with other words: synonyms, the vocabulary the documents would use, or a more "
    "specific term. For an exact word or phrase (a name, a code, a number) use find_mentions, "
    "which checks every document."
)


def page_span(pages: tuple[int, int] | Sequence[int]) -> str:
    """``p. 3`` or ``p. 3–5``."""
    first, last = pages[0], pages[-1]
    return f"p. {first}" if first == last else f"p. {first}–{last}"


def page_range(first: int, last: int) -> str:
    """A ``pages`` argument: ``"9"`` or ``"9-12"``."""
    return str(first) if first == last else f"{first}-{last}"


def not_searchable_note(count: int) -> str | None:
    """What search_documents and find_mentions say when some of the project's documents were
    left out; None when none was."""
    if not count:
        return None
    return (
        f"{count} document(s) of the project were not searched because they are still being "
        "extracted or cannot be searched (call list_documents to see why)."
    )


def search_text(found: ProjectSearch) -> str:
    """The search's text, ending with :func:`not_searchable_note` when documents were left out."""
    text = _search_body(found.project, found.query, found.result)
    if note := not_searchable_note(found.documents_not_searchable):
        return f"{text}\n\n{note}"
    return text


def _search_body(project: Project, query: str, result: SearchResult) -> str:
    if not result.hits:
        if project.ready_count == 0:
            return (
                f"Project {project.name!r} has no searchable documents yet "
                f"({project.document_count} document(s), none ready). "
                "Call list_documents to see their status."
            )
        if result.no_term_matched:
            said = no_match_note(None, shown=False)
            return f"In project {project.name!r}, {said} ({query!r}). {RETRY_HINT}"
        return f"No passage in project {project.name!r} matches {query!r}. {RETRY_HINT}"
    order = ranking_note(
        result.ranking, result.reranker, scored=result.scored, candidates=result.candidates
    )
    if result.insufficient_evidence and not result.no_term_matched:
        lines = [
            f"The documents of project {project.name!r} do not answer {query!r}: no passage "
            "reaches the evidence floor. Say so rather than answer from these passages. The "
            f"{len(result.hits)} closest passage(s) follow, best first ({order}), in case the "
            f"question can be asked another way. {RETRY_HINT}"
        ]
    else:
        lines = [
            f"{len(result.hits)} passage(s) from project {project.name!r} for {query!r}, "
            f"best first ({order})."
        ]
    if result.no_term_matched:
        said = no_match_note(result.reranker if result.reranked else None, shown=True)
        lines.append(f"{said[0].upper()}{said[1:]}: they may not answer the question. {RETRY_HINT}")
    for number, hit in enumerate(result.hits, start=1):
        lines.append("")
        heading = f" — {hit.heading}" if hit.heading else ""
        lines.append(f"[{number}] {hit.document_name} — {page_span(hit.pages)}{heading}")
        if hit.answer_spans:
            lines.append(textwrap.indent(f"Best match: {hit.answer_text}", "  "))
        lines.append(textwrap.indent(hit.text.strip(), "  "))
        if hit.near_copies:
            lines.append(f"  ({near_copies_note(hit.near_copies)})")
    lines.append("")
    lines.append("Sources:")
    for source in result.sources:
        pages = ", ".join(str(page) for page in source.pages)
        alike = ", ".join(other.name for other in source.look_alikes)
        note = f"; shares most of its text with {alike}" if alike else ""
        lines.append(f"- {source.name} (document id {source.id}), p. {pages}{note}")
    return "\n".join(lines)


def documents_text(project: Project, documents: Sequence[Document]) -> str:
    if not documents:
        return f"Project {project.name!r} has no documents yet."
    ready = sum(1 for document in documents if document.searchable)
    lines = [
        f"Project {project.name!r}: {len(documents)} document(s), {ready} searchable.",
    ]
    for document in documents:
        if document.searchable:
            pages = f"{document.page_count} page(s)" if document.page_count else "ready"
            state = f"ready, {pages}"
            if note := ocr_note(document):
                state = f"{state}; {note}"
        else:
            state = unsearchable_reason(document)
        lines.append(f"- {document.name} (id {document.id}) — {state}")
    return "\n".join(lines)


def mentions_text(found: Mentions) -> str:
    quoted = [f"{term!r}" for term in found.terms]
    joined = (" and " if found.match == "all" else " or ").join(quoted)
    project = found.project.name
    lines: list[str] = []
    if found.documents_searched == 0:
        lines.append(f"Project {project!r} has no searchable documents, so nothing was searched.")
    elif not found.documents:
        lines.append(
            f"No document in project {project!r} contains {joined} "
            f"(all {found.documents_searched} searchable document(s) were checked, "
            "case-insensitively, for the exact word or phrase)."
        )
        lines.append(
            "Check spelling variants, plurals or abbreviations, or use search_documents "
            "to look for the idea in other words."
        )
    else:
        lines.append(
            f"{len(found.documents)} of {found.documents_searched} searchable document(s) in "
            f"project {project!r} contain {joined} (exhaustive, case-insensitive):"
        )
        for document in found.documents:
            counts = "; ".join(
                f"{term.term!r} ×{term.occurrences}"
                + (f" ({page_span_list(term.pages)})" if term.pages else "")
                for term in document.terms
            )
            lines.append(f"- {document.document_name} (id {document.document_id}): {counts}")
        totals = "; ".join(
            f"{total.term!r} {total.occurrences} time(s) in {total.documents} document(s)"
            for total in found.totals
        )
        lines.append(f"Totals: {totals}.")
    if note := not_searchable_note(found.documents_not_searchable):
        lines.append(note)
    return "\n".join(lines)


def page_span_list(pages: Sequence[int]) -> str:
    """``p. 2, 5, 9``; long lists are shortened to the first pages and a count."""
    shown = ", ".join(str(page) for page in pages[:12])
    more = f" and {len(pages) - 12} more" if len(pages) > 12 else ""
    return f"p. {shown}{more}"
