"""Turn ranked chunks into cited hits and the list of sources they cite."""

from __future__ import annotations

from collections.abc import Sequence

from retrieval.types import Chunk, DocumentRef, Hit, NearCopy, Ranking, Source


def hit(
    chunk: Chunk,
    document: DocumentRef,
    *,
    score: float,
    bm25: float,
    relevance: float,
    matched_words: tuple[str, ...] = (),
    near_copies: tuple[NearCopy, ...] = (),
    answer_spans: tuple[tuple[int, int], ...] = (),
) -> Hit:
    """A chunk as a search hit, named by its document and pages."""
    return Hit(
        chunk_id=chunk.id,
        document_id=document.id,
        document_name=document.name,
        pages=chunk.pages,
        heading=chunk.heading,
        text=chunk.text,
        score=score,
        bm25=bm25,
        relevance=relevance,
        matched_words=matched_words,
        near_copies=near_copies,
        answer_spans=answer_spans,
    )


def near_copy(chunk: Chunk, document: DocumentRef, similarity: float) -> NearCopy:
    """A folded passage, named by its document and pages."""
    return NearCopy(chunk.id, document.id, document.name, chunk.pages, similarity)


def sources(hits: Sequence[Hit]) -> list[Source]:
    """Each cited document once, in the order it first appears in ``hits``."""
    names: dict[str, str] = {}
    pages: dict[str, set[int]] = {}
    for item in hits:
        names.setdefault(item.document_id, item.document_name)
        pages.setdefault(item.document_id, set()).add(item.pages[0])
    return [
        Source(
            id=document_id,
            name=name,
            first_page=min(pages[document_id]),
            pages=tuple(sorted(pages[document_id])),
        )
        for document_id, name in names.items()
    ]


def format_pages(pages: tuple[int, int]) -> str:
    """``"p. 4"`` or ``"pp. 4-6"``, for citations written as text."""
    first, last = pages
    return f"p. {first}" if first == last else f"pp. {first}-{last}"


def near_copies_note(copies: Sequence[NearCopy]) -> str:
    """``"also, nearly the same, in b.pdf p. 3; c.pdf pp. 4-5"``, or ``""`` without copies:
    where the passages folded into a hit are (:mod:`retrieval.near_duplicates`)."""
    if not copies:
        return ""
    places = "; ".join(f"{copy.document_name} {format_pages(copy.pages)}" for copy in copies)
    count = f"{len(copies)} near-cop{'y' if len(copies) == 1 else 'ies'} folded"
    return f"{count}: {places}"


def ranking_note(ranking: Ranking, reranker: str, *, scored: int, candidates: int) -> str:
    """How a result was ordered, in words every door shows: ``"reranked by local"``,
    ``"partly ranked: 12 of 100 passages scored by local …"`` or ``"BM25 order"``."""
    if ranking == "reranked":
        return f"reranked by {reranker}"
    if ranking == "partly_ranked":
        return (
            f"partly ranked: {scored} of {candidates} passages scored by {reranker}, "
            "the rest in BM25 order (still warming; results may improve)"
        )
    return "BM25 order" if reranker == "none" else f"BM25 order ({reranker} did not rank)"


NO_SEARCHABLE_WORDS = "the query has no searchable words (only stopwords or punctuation)"
NO_PASSAGE_HAS_A_WORD = "no passage contains any of the query's words"


def no_match_note(reranker: str | None, *, shown: bool, query_has_words: bool = True) -> str:
    """What a search in which no passage holds a word of the query says, in the words every
    door shows: nothing is shown (no word, and no reranker score, put a passage forward), or
    the passages shown are the reranker's closest, in its order (``reranker`` scored them),
    or they were picked another way (a document-level question's sections)."""
    said = NO_PASSAGE_HAS_A_WORD if query_has_words else NO_SEARCHABLE_WORDS
    if not shown:
        return f"{said}, so no passage is shown"
    if reranker is not None:
        return f"{said}; the passages shown are the closest {reranker} found, in its order"
    return said
