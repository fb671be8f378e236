"""Mentions: every document of a project that contains a word or phrase, counted."""

from __future__ import annotations

from uuid import UUID

from litestar import Controller, get
from litestar.params import FromPath, FromQuery

from service.errors import ProjectNotFound, RateLimited
from service.http.dependencies import PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.http.schemas import Struct
from service.services import mentions


class TermCount(Struct):
    term: str
    occurrences: int
    pages: list[int]
    """Pages holding the term; an occurrence across a page break is counted but has no page."""


class DocumentRef(Struct):
    id: UUID
    name: str


class DocumentMentions(Struct):
    document: DocumentRef
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
                    document=DocumentRef(id=doc.document_id, name=doc.document_name),
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


class MentionsController(Controller):
    path = "/api/projects"
    tags = ["search"]

    @operation(
        get,
        "/{project_id:uuid}/mentions",
        operation_id="FindMentions",
        summary="Find every document that mentions words",
        scope="read",
        raises=(ProjectNotFound, RateLimited),
    )
    async def find_mentions(
        self,
        runtime: RuntimeDep,
        principal: PrincipalDep,
        project_id: FromPath[UUID],
        terms: FromQuery[list[str]],
        match: FromQuery[mentions.Match] = "all",
    ) -> MentionsResponse:
        """Every ready document containing all (or any) of the terms, exhaustively, with counts.

        Terms match case-insensitively as exact substrings after collapsing whitespace.

        Returns:
            Per document, each term's occurrences and pages; per term, totals; and how many
            documents were searched (and how many were not, being pending or failed).
        """
        found = await mentions.find_mentions(runtime, principal, project_id, terms, match)
        return MentionsResponse.from_result(found)
