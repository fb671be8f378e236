"""URL imports: a document fetched from a web address by a worker, then extracted."""

from __future__ import annotations

from uuid import UUID

from litestar import Controller, post
from litestar.params import FromPath, JSONBody
from litestar.status_codes import HTTP_202_ACCEPTED

from service.errors import (
    DuplicateDocumentName,
    ProjectNotFound,
    RateLimited,
    UrlNotAllowed,
    UrlUnreachable,
)
from service.http.dependencies import PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.http.schemas import Document, ImportRequest
from service.services import imports


class ImportController(Controller):
    path = "/api/projects"
    tags = ["documents"]

    @operation(
        post,
        "/{project_id:uuid}/imports",
        operation_id="ImportDocument",
        summary="Import a document from a web address",
        scope="write",
        raises=(ProjectNotFound, DuplicateDocumentName, UrlNotAllowed, UrlUnreachable, RateLimited),
        has_body=True,
        status_code=HTTP_202_ACCEPTED,
    )
    async def import_document(
        self,
        runtime: RuntimeDep,
        principal: PrincipalDep,
        project_id: FromPath[UUID],
        data: JSONBody[ImportRequest],
    ) -> Document:
        """Import a document from a web address: a worker fetches it, then extracts it.

        Only public ``https://`` addresses are fetched (see the ``fetch`` settings); an address
        that resolves anywhere else is refused with ``url_not_allowed`` before any connection.
        The name is ``filename``, else the address's last path segment.

        Returns:
            202 with the new document (``pending``). A fetch that fails later (unreachable,
            too large, not a supported type) leaves the document ``error`` with that code.
        """
        # No connection is lent for the request: the address's DNS lookup comes first.
        document = await imports.import_url(
            runtime, principal, project_id=project_id, url=data.url, filename=data.filename
        )
        return Document.from_record(document)
