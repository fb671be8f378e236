"""Search a project's documents."""

from __future__ import annotations

from uuid import UUID

from litestar import Controller, post
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_200_OK

from service.http.dependencies import PrincipalDep, RuntimeDep
from service.http.schemas import SearchRequest
from service.services.search import search_project
from service.shapes import SearchResponse


class SearchController(Controller):
    path = "/api/projects"
    tags = ["search"]

    @post("/{project_id:uuid}/search", operation_id="SearchProject", status_code=HTTP_200_OK)
    async def search(
        self,
        runtime: RuntimeDep,
        principal: PrincipalDep,
        project_id: FromPath[UUID],
        data: JSONBody[SearchRequest],
    ) -> SearchResponse:
        """Ranked, cited passages: BM25 shortlist over the project's ready documents, then rerank.

        Returns:
            ``results`` (document, pages, heading, text, ``score`` for order, ``relevance`` on a
            0-1 scale shared by every query), ``insufficient_evidence`` when no passage reaches
            the evidence floor, ``sources`` (each cited document once), which ``reranker`` ran
            and whether it ``reranked``; ``warnings`` say why not.
            A ``document_ids`` entry that is not a document of the project is 404
            ``document_not_found``; one that cannot be searched yet is 409 ``document_not_ready``.
        """
        found = await search_project(
            runtime,
            principal,
            project_id,
            data.query,
            top_k=data.top_k,
            documents=data.document_ids,
        )
        return SearchResponse.from_search(found)
