"""Who a tool call acts for, and which project it means when it names none.

Over HTTP the Bearer token decides the user, per request; over stdio the user
and the default project are fixed when the process starts. Either way a tool
receives a :class:`Caller` and never sees a token.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

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

    def project_named(self, requested: str | None) -> str | None:
        """The project a call names: its ``project`` argument, else the process's ``--project``."""
        return (requested or "").strip() or self.default_project


async def resolve_project(conn: Connection, caller: Caller, requested: str | None) -> Project:
    """The project a call means: the one it (or ``--project``) names, else the service's rule
    (:func:`service.services.projects.resolve_project`: the only project, else "default")."""
    return await projects.resolve_project(
        conn, caller.principal.user_id, caller.project_named(requested)
    )
