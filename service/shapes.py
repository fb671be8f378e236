"""Shapes more than one door speaks: the base of every body, and the answer to a search.

:class:`SearchResponse` is the one search answer (and :class:`MentionsResponse` the one
answer to "which documents mention …"): the REST API and ``shortlist search --json``
encode it whole, and the MCP tool ``search_documents`` returns it as its structured content
(without each passage's ``text``, which the model reads once, in the tool's text). The REST
door's other bodies are in :mod:`service.http.schemas`.
"""

from __future__ import annotations

from typing import Annotated
from uuid import UUID

import msgspec

from retrieval.citations import ranking_note
from retrieval.relevance import RelevanceLabel
from retrieval.types import Ranking
from service.services import mentions
from service.services.page_images import page_image_path
from service.services.search import ProjectSearch


class Struct(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """Base of every request and response body."""


class DocumentName(Struct):
    id: UUID
    name: str


class ProjectName(Struct):
    id: UUID
    name: str


class SearchNearCopy(Struct):
    document: DocumentName
    pages: list[int]
    chunk_id: str
    similarity: Annotated[
        float,
        msgspec.Meta(
            ge=0.0,
            le=1.0,
            description="Word 3-shingle Jaccard with the result's text; 1 for an identical passage.",
        ),
    ]


class SearchFigure(Struct):
    number: Annotated[
        int, msgspec.Meta(description="The figure's number in its document, from 1, page order.")
    ]
    page: int
    label: Annotated[str, msgspec.Meta(description='"Figure 3", or "" without a caption.')]
    caption: str
    image_url: Annotated[
        str,
        msgspec.Meta(
            description="The figure (its caption included) drawn as a PNG cropped from its page "
            "(GET /api/documents/{id}/pages/{n}/image?figure=number)."
        ),
    ]


class SearchHit(Struct):
    document: DocumentName
    pages: list[int]
    heading: str
    text: str
    score: Annotated[
        float,
        msgspec.Meta(description="Orders this query's results; not comparable across queries."),
    ]
    chunk_id: str
    relevance: Annotated[
        float,
        msgspec.Meta(
            ge=0.0,
            le=1.0,
            description=(
                "How well the passage answers the query, on the same 0-1 scale for every "
                "query; below the evidence floor it is not evidence."
            ),
        ),
    ]
    relevance_label: Annotated[
        RelevanceLabel,
        msgspec.Meta(description="The relevance in words; 'low' is below the evidence floor."),
    ]
    matched_words: list[str]
    """Words of ``text`` (casefolded) that match a query term, as BM25 matched them."""
    answer_spans: Annotated[
        list[tuple[int, int]],
        msgspec.Meta(
            description=(
                "[start, end) character offsets into text of the one or two sentences that "
                "best match the query, in text order: what to mark, or read first, when showing "
                "the passage. Empty when no sentence holds a word of the query."
            )
        ),
    ]
    near_copies: Annotated[
        list[SearchNearCopy],
        msgspec.Meta(
            description=(
                "Lower-ranked passages with nearly the same text (another version of the "
                "document, a repeated block, a template sibling), folded into this result "
                "instead of shown again: where each one is."
            )
        ),
    ]
    page_image_url: Annotated[
        str | None,
        msgspec.Meta(
            description=(
                "The passage's first page drawn as a PNG with the passage marked on it "
                "(GET /api/documents/{id}/pages/{n}/image?highlight=chunk_id; add "
                "&crop=passage for its region alone); needs the same token as the search. "
                "None for a document without pages to draw (only PDFs and images have them)."
            )
        ),
    ] = None
    figure: Annotated[
        SearchFigure | None,
        msgspec.Meta(
            description=(
                "The figure this passage is or sits beside (it holds the figure's caption, or "
                "names it on the figure's page); None when there is none."
            )
        ),
    ] = None


class SearchSource(Struct):
    document: DocumentName
    first_page: int
    pages: list[int]
    look_alikes: Annotated[
        list[DocumentName],
        msgspec.Meta(
            description=(
                "Other searched documents sharing most of this one's passages (another "
                "version, a template sibling)."
            )
        ),
    ]


class SearchResponse(Struct):
    project: Annotated[ProjectName, msgspec.Meta(description="The project searched.")]
    query: str
    results: list[SearchHit]
    sources: list[SearchSource]
    reranker: str
    reranked: Annotated[
        bool,
        msgspec.Meta(description="True only when the reranker scored every candidate."),
    ]
    ranking: Annotated[
        Ranking,
        msgspec.Meta(
            description=(
                "How the results were ordered: 'reranked' (every candidate scored), "
                "'partly_ranked' (only `scored` of `candidates`; the rest by BM25 alone while "
                "the local model warms), 'bm25_order' (no reranker, or it failed: see warnings)."
            )
        ),
    ]
    ranking_note: Annotated[
        str,
        msgspec.Meta(description="`ranking` in words, as the CLI, MCP and the panel show it."),
    ]
    warnings: list[str]
    candidates: int
    scored: Annotated[int, msgspec.Meta(description="Candidates the reranker scored.")]
    unscored: int
    """Candidates the reranker had no score for yet (still warming): ranked by BM25 alone."""
    exhaustive: bool
    insufficient_evidence: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "True when no passage reaches the evidence floor: the documents do not appear "
                "to answer the query, and results are only the closest passages."
            )
        ),
    ]
    query_words_matched: Annotated[
        bool,
        msgspec.Meta(
            description=(
                "False when none of the query's words occurs in the searched documents: the "
                "results are then only what the reranker scored closest (in its order), or "
                "none when it scored nothing; the warnings say which."
            )
        ),
    ]
    documents_not_searchable: Annotated[
        int,
        msgspec.Meta(
            description=(
                "The project's documents left out of this search because they are still being "
                "extracted or cannot be searched (see each document's status); 0 when the "
                "search was restricted to document_ids."
            )
        ),
    ]

    @classmethod
    def from_search(cls, found: ProjectSearch) -> SearchResponse:
        result = found.result
        return cls(
            project=ProjectName(id=found.project.id, name=found.project.name),
            query=found.query,
            results=[
                SearchHit(
                    document=DocumentName(id=UUID(hit.document_id), name=hit.document_name),
                    pages=list(hit.pages),
                    heading=hit.heading,
                    text=hit.text,
                    score=hit.score,
                    chunk_id=hit.chunk_id,
                    relevance=hit.relevance,
                    relevance_label=hit.relevance_label,
                    matched_words=list(hit.matched_words),
                    answer_spans=list(hit.answer_spans),
                    near_copies=[
                        SearchNearCopy(
                            document=DocumentName(
                                id=UUID(copy.document_id), name=copy.document_name
                            ),
                            pages=list(copy.pages),
                            chunk_id=copy.chunk_id,
                            similarity=copy.similarity,
                        )
                        for copy in hit.near_copies
                    ],
                    page_image_url=(
                        found.base_url
                        + page_image_path(hit.document_id, hit.pages[0], passage=hit.chunk_id)
                        if hit.document_id in found.pictured
                        else None
                    ),
                    figure=_figure(found, hit.document_id, hit.chunk_id),
                )
                for hit in result.hits
            ],
            sources=[
                SearchSource(
                    document=DocumentName(id=UUID(source.id), name=source.name),
                    first_page=source.first_page,
                    pages=list(source.pages),
                    look_alikes=[
                        DocumentName(id=UUID(other.id), name=other.name)
                        for other in source.look_alikes
                    ],
                )
                for source in result.sources
            ],
            reranker=result.reranker,
            reranked=result.ranking == "reranked",
            ranking=result.ranking,
            ranking_note=ranking_note(
                result.ranking, result.reranker, scored=result.scored, candidates=result.candidates
            ),
            warnings=list(result.warnings),
            candidates=result.candidates,
            scored=result.scored,
            unscored=result.unscored,
            exhaustive=result.exhaustive,
            insufficient_evidence=result.insufficient_evidence,
            query_words_matched=not result.no_term_matched,
            documents_not_searchable=found.documents_not_searchable,
        )


def _figure(found: ProjectSearch, document_id: str, chunk_id: str) -> SearchFigure | None:
    numbered = found.figures.get(chunk_id)
    if numbered is None:
        return None
    figure = numbered.figure
    path = page_image_path(document_id, figure.page, figure=numbered.number)
    return SearchFigure(
        number=numbered.number,
        page=figure.page,
        label=figure.label,
        caption=figure.caption,
        image_url=found.base_url + path,
    )


class TermCount(Struct):
    term: str
    occurrences: int
    pages: list[int]
    """Pages holding the term; an occurrence across a page break is counted but has no page."""


class DocumentMentions(Struct):
    document: DocumentName
    terms: list[TermCount]


class TermTotal(Struct):
    term: str
    occurrences: int
    documents: int


class MentionsResponse(Struct):
    project_id: UUID
    terms: list[str]
    match: mentions.Match
    documents: list[DocumentMentions]
    totals: list[TermTotal]
    documents_searched: int
    documents_not_searchable: int

    @classmethod
    def from_result(cls, found: mentions.Mentions) -> MentionsResponse:
        return cls(
            project_id=found.project.id,
            terms=list(found.terms),
            match=found.match,
            documents=[
                DocumentMentions(
                    document=DocumentName(id=doc.document_id, name=doc.document_name),
                    terms=[
                        TermCount(term=t.term, occurrences=t.occurrences, pages=list(t.pages))
                        for t in doc.terms
                    ],
                )
                for doc in found.documents
            ],
            totals=[
                TermTotal(term=t.term, occurrences=t.occurrences, documents=t.documents)
                for t in found.totals
            ],
            documents_searched=found.documents_searched,
            documents_not_searchable=found.documents_not_searchable,
        )
