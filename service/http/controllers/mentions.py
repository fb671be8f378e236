"""Mentions: every document of a project that contains a word or phrase, counted."""

from __future__ import annotations

from uuid import UUID

from litestar import Controller, get
from litestar.params import FromPath, FromQuery

from service.errors import ProjectNotFound, RateLimited
from service.http.dependencies import PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.services import mentions
from service.shapes import MentionsResponse


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
