"""Projects: a user's named collections of documents."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar
from uuid import UUID

from service.errors import EmptyName, InvalidRequest, ProjectExists, ProjectNotFound
from service.records import Principal, Project
from service.services import scopes
from service.services.filenames import unsafe_characters
from service.storage.db import Connection, fetch_all, fetch_one, unique_violation_as

#: The project ``shortlist user create`` makes, and the one meant when a user has several.
DEFAULT_PROJECT_NAME = "default"

P = TypeVar("P")


async def create_project(conn: Connection, user_id: UUID, name: str) -> Project:
    if not name.strip():
        raise EmptyName("A project name may not be empty.")
    if problem := unsafe_characters(name):
        raise InvalidRequest(f"A project name may not contain {problem}.", field="name")
    with unique_violation_as(ProjectExists(f"You already have a project named {name.strip()!r}.")):
        row = await fetch_one(conn, "insert_project", user_id=user_id, name=name)
    assert row is not None
    return Project.from_row(row)


async def add_project(conn: Connection, principal: Principal, name: str) -> Project:
    """A new project for the caller, whose token must be allowed to write."""
    scopes.require_write(principal)
    return await create_project(conn, principal.user_id, name)


async def list_projects(conn: Connection, user_id: UUID) -> list[Project]:
    rows = await fetch_all(conn, "list_projects", user_id=user_id)
    return [Project.from_row(row) for row in rows]


async def get_project(conn: Connection, user_id: UUID, project_id: UUID) -> Project:
    """One of the user's projects; another user's project is indistinguishable from none."""
    row = await fetch_one(conn, "fetch_project", user_id=user_id, project_id=project_id)
    if row is None:
        raise ProjectNotFound()
    return Project.from_row(row)


async def find_project(conn: Connection, user_id: UUID, name_or_id: str) -> Project:
    """A project named by id or by name (case-insensitive), as the CLI and MCP accept."""
    try:
        return await get_project(conn, user_id, UUID(name_or_id))
    except ValueError:
        pass
    except ProjectNotFound:
        pass
    if unsafe_characters(name_or_id):  # no project is named so (and PostgreSQL refuses NUL)
        raise ProjectNotFound(f"You have no project named {name_or_id!r}.")
    row = await fetch_one(conn, "fetch_project_by_name", user_id=user_id, name=name_or_id)
    if row is None:
        raise ProjectNotFound(f"You have no project named {name_or_id!r}.")
    return Project.from_row(row)


async def resolve_project(conn: Connection, user_id: UUID, requested: UUID | str | None) -> Project:
    """The project a request means, the same through every door.

    The rule: the project asked for (id or name) if any; else the user's only
    project; else their project named "default"; else an error saying to choose.
    """
    if isinstance(requested, UUID):
        return await get_project(conn, user_id, requested)
    if requested is not None and requested.strip():
        return await find_project(conn, user_id, requested.strip())
    return default_project(await list_projects(conn, user_id), lambda project: project.name)


def default_project(owned: Sequence[P], name_of: Callable[[P], str]) -> P:
    """Of a user's projects, the one a request that names none means (see :func:`resolve_project`).

    Takes any project shape (records here, JSON objects in the HTTP client) and its name.
    """
    if len(owned) == 1:
        return owned[0]
    for project in owned:
        if name_of(project).strip().casefold() == DEFAULT_PROJECT_NAME:
            return project
    if not owned:
        raise ProjectNotFound("You have no projects yet: create one, then upload documents to it.")
    names = ", ".join(repr(name_of(project)) for project in owned)
    raise InvalidRequest(
        f"You have several projects ({names}) and none is named {DEFAULT_PROJECT_NAME!r}; "
        "say which one.",
        field="project",
    )
