"""Who a tool call acts for, and which project it means when it names none.

Over HTTP the Bearer token decides the user, per request; over stdio the user
and the default project are fixed when the process starts. Either way a tool
receives a :class:`Caller` and never sees a token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from service.errors import InvalidRequest, ProjectNotFound
from service.records import Principal, Project
from service.services import projects
from service.storage.db import Connection

if TYPE_CHECKING:
    from service.runtime import Runtime


class Caller(NamedTuple):
    runtime: Runtime
    principal: Principal
    default_project: str | None = None
    """Name or id of the project used when a tool call names none (stdio's ``--project``)."""


async def resolve_project(conn: Connection, caller: Caller, requested: str | None) -> Project:
    """The project a call means.

    The rule: the ``project`` argument (name or id) if given; else the process's
    ``--project`` (stdio); else the user's only project; else their project
    named "default"; else an error listing the projects to choose from.
    """
    user_id = caller.principal.user_id
    named = (requested or "").strip() or caller.default_project
    if named:
        return await projects.find_project(conn, user_id, named)
    owned = await projects.list_projects(conn, user_id)
    if len(owned) == 1:
        return owned[0]
    for project in owned:
        if project.name.strip().casefold() == projects.DEFAULT_PROJECT_NAME:
            return project
    if not owned:
        raise ProjectNotFound("You have no projects yet: create one, then upload documents to it.")
    names = ", ".join(repr(project.name) for project in owned)
    raise InvalidRequest(f"You have several projects ({names}); say which one with project=NAME.")
