"""Upload grants: every check happens here, before any byte moves."""

from __future__ import annotations

from litestar import Controller, post
from litestar.params import JSONBody

from service.errors import (
    DocumentNotFound,
    DuplicateDocumentName,
    FileTooLarge,
    InvalidContentType,
    ProjectNotFound,
    RateLimited,
    UnsupportedFileType,
)
from service.http.dependencies import ConnectionDep, PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.http.schemas import UploadGrantBody, UploadPartBody, UploadRequest
from service.services import uploads
from service.storage.blobs import BlobStoreUnavailable


class UploadController(Controller):
    path = "/api/uploads"
    tags = ["documents"]

    @operation(
        post,
        "/",
        operation_id="CreateUpload",
        summary="Ask for an upload grant",
        scope="write",
        raises=(
            ProjectNotFound,
            DocumentNotFound,
            InvalidContentType,
            DuplicateDocumentName,
            FileTooLarge,
            UnsupportedFileType,
            RateLimited,
            BlobStoreUnavailable,
        ),
        has_body=True,
    )
    async def create_upload(
        self,
        runtime: RuntimeDep,
        conn: ConnectionDep,
        principal: PrincipalDep,
        data: JSONBody[UploadRequest],
    ) -> UploadGrantBody:
        """Ask for a short-lived grant to upload one file straight to the blob store.

        The caller must own the project; the type must be searchable; the size must be under the
        limit; the name must not already be a document of the project. A refusal says which rule.

        Returns:
            201 with the grant: send the file with ``method`` to ``url`` (POST: multipart form with
            ``fields`` first and the file as ``file``; PUT: raw body with ``headers``). A large file
            bound for S3 gets ``MULTIPART``: PUT each of ``parts`` (its byte range of the file) to
            its own ``url``, in any order or in parallel, sending a failed part again. Then register
            the file with ``POST /api/documents``, which joins the parts (or, for a grant that
            ``replaces`` a document, with ``POST /api/documents/{document_id}/original``).
        """
        granted = await uploads.grant_upload(
            runtime,
            conn,
            principal,
            project_id=data.project_id,
            filename=data.filename,
            content_type=data.content_type,
            size=data.size,
            replaces=data.replaces,
        )
        grant = granted.grant
        return UploadGrantBody(
            upload_id=granted.upload.id,
            method=grant.method,
            url=grant.url,
            fields=grant.fields,
            headers=grant.headers,
            expires_at=grant.expires_at,
            parts=[
                UploadPartBody(number=part.number, offset=part.offset, size=part.size, url=part.url)
                for part in grant.parts
            ],
        )
