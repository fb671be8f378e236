"""Projects: list and create the caller's own."""

from __future__ import annotations

from uuid import UUID

from litestar import Controller, get, post
from litestar.params import FromPath, JSONBody

from service.errors import EmptyName, ProjectExists, ProjectNotFound
from service.http.dependencies import ConnectionDep, PrincipalDep
from service.http.operations import operation
from service.http.schemas import Project, ProjectCreate, ProjectList
from service.services import projects


class ProjectController(Controller):
    path = "/api/projects"
    tags = ["projects"]

    @operation(get, "/", operation_id="ListProjects", summary="List your projects", scope="read")
    async def list_projects(self, conn: ConnectionDep, principal: PrincipalDep) -> ProjectList:
        """The caller's projects with their document counts."""
        found = await projects.list_projects(conn, principal.user_id)
        return ProjectList(projects=[Project.from_record(project) for project in found])

    @operation(
        post,
        "/",
        operation_id="CreateProject",
        summary="Create a project",
        scope="write",
        raises=(EmptyName, ProjectExists),
        has_body=True,
    )
    async def create_project(
        self, conn: ConnectionDep, principal: PrincipalDep, data: JSONBody[ProjectCreate]
    ) -> Project:
        """Create a project; names are unique per user, compared case-insensitively.

        Returns:
            The new project (201); 409 project_exists if the name is taken; 403
            token_read_only for a read token.
        """
        return Project.from_record(await projects.add_project(conn, principal, data.name))

    @operation(
        get,
        "/{project_id:uuid}",
        operation_id="GetProject",
        summary="Read a project",
        scope="read",
        raises=(ProjectNotFound,),
    )
    async def get_project(
        self, conn: ConnectionDep, principal: PrincipalDep, project_id: FromPath[UUID]
    ) -> Project:
        """One of the caller's projects; another user's project is a 404."""
        return Project.from_record(await projects.get_project(conn, principal.user_id, project_id))
