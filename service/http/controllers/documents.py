"""Documents: register an upload, list, read, open, delete, re-extract."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Literal
from uuid import UUID

from litestar import Controller, Response, delete, get, post, put
from litestar.params import FromPath, FromQuery, JSONBody
from litestar.status_codes import HTTP_202_ACCEPTED

from service.errors import (
    DocumentNotFound,
    DocumentNotReady,
    DuplicateDocumentName,
    FigureNotFound,
    InvalidPageRange,
    NoPageImage,
    PageNotFound,
    PageRenderFailed,
    PassageNotFound,
    ProjectNotFound,
    SyncPathTaken,
    UnsupportedFileType,
    UploadAlreadyUsed,
    UploadIncomplete,
    UploadNotFound,
)
from service.http.dependencies import ConnectionDep, PrincipalDep, RuntimeDep
from service.http.operations import operation
from service.http.schemas import (
    Document,
    DocumentCreate,
    DocumentList,
    DocumentName,
    DocumentTextBody,
    FileLink,
    OriginalReplace,
    SyncFollow,
)
from service.services import documents, folder_sync, page_images, uploads
from service.storage.blobs import BlobStoreUnavailable


class DocumentController(Controller):
    path = "/api"
    tags = ["documents"]

    @operation(
        post,
        "/documents",
        operation_id="CreateDocument",
        summary="Register a finished upload as a document",
        scope="write",
        raises=(
            ProjectNotFound,
            UploadNotFound,
            UploadAlreadyUsed,
            UploadIncomplete,
            DuplicateDocumentName,
            SyncPathTaken,
            UnsupportedFileType,
            BlobStoreUnavailable,
        ),
        has_body=True,
    )
    async def create_document(
        self,
        runtime: RuntimeDep,
        conn: ConnectionDep,
        principal: PrincipalDep,
        data: JSONBody[DocumentCreate],
    ) -> Document:
        """Register a finished upload as a document and queue its extraction.

        Returns:
            201 with the document, ``status: "pending"``; 409 if the name was taken meanwhile.
        """
        created = await uploads.register_document(
            runtime,
            conn,
            principal,
            project_id=data.project_id,
            upload_id=data.upload_id,
            sync=data.sync.to_record() if data.sync else None,
        )
        return Document.from_record(created)

    @operation(
        post,
        "/documents/{document_id:uuid}/original",
        operation_id="ReplaceDocumentOriginal",
        summary="Give a document a new original",
        scope="write",
        raises=(
            DocumentNotFound,
            UploadNotFound,
            UploadAlreadyUsed,
            UploadIncomplete,
            SyncPathTaken,
            BlobStoreUnavailable,
        ),
        has_body=True,
        status_code=HTTP_202_ACCEPTED,
    )
    async def replace_original(
        self,
        runtime: RuntimeDep,
        conn: ConnectionDep,
        principal: PrincipalDep,
        document_id: FromPath[UUID],
        data: JSONBody[OriginalReplace],
    ) -> Document:
        """Make a finished upload the document's new original and extract it again.

        The upload must have been granted with ``replaces`` set to this document (so it carries
        the document's name); the document keeps its id and name, and the old original is
        deleted. ``shortlist sync`` sends a changed file this way.

        Returns:
            202 with the document back in ``pending``.
        """
        replaced = await uploads.replace_original(
            runtime,
            conn,
            principal,
            document_id=document_id,
            upload_id=data.upload_id,
            sync=data.sync.to_record() if data.sync else None,
        )
        return Document.from_record(replaced)

    @operation(
        put,
        "/documents/{document_id:uuid}/sync",
        operation_id="FollowSyncedFile",
        summary="Move a synced document with its file",
        scope="write",
        raises=(DocumentNotFound, DuplicateDocumentName, SyncPathTaken),
        has_body=True,
    )
    async def follow_synced_file(
        self,
        conn: ConnectionDep,
        principal: PrincipalDep,
        document_id: FromPath[UUID],
        data: JSONBody[SyncFollow],
    ) -> Document:
        """A synced document follows its file (same bytes) to a new path and name, keeping its
        extraction; ``shortlist sync`` records a moved, renamed or touched file this way.

        Returns:
            The document; 400 if it does not mirror a synced file, 409
            ``duplicate_document_name`` or ``sync_path_taken`` if the name or path is taken.
        """
        followed = await folder_sync.follow_file(
            conn,
            principal,
            document_id,
            path=data.path,
            name=data.name,
            size=data.size,
            mtime_ns=data.mtime_ns,
        )
        return Document.from_record(followed)

    @operation(
        get,
        "/projects/{project_id:uuid}/documents",
        operation_id="ListDocuments",
        summary="List a project's documents",
        scope="read",
        raises=(ProjectNotFound,),
    )
    async def list_documents(
        self, conn: ConnectionDep, principal: PrincipalDep, project_id: FromPath[UUID]
    ) -> DocumentList:
        """Every document of the project with its status; one that cannot be searched says why."""
        found = await documents.list_documents(conn, principal, project_id)
        return DocumentList(documents=[Document.from_record(item) for item in found])

    @operation(
        get,
        "/documents/{document_id:uuid}",
        operation_id="GetDocument",
        summary="Read a document's metadata",
        scope="read",
        raises=(DocumentNotFound,),
    )
    async def get_document(
        self, conn: ConnectionDep, principal: PrincipalDep, document_id: FromPath[UUID]
    ) -> Document:
        """One document's metadata and status."""
        return Document.from_record(await documents.get_document(conn, principal, document_id))

    @operation(
        get,
        "/documents/{document_id:uuid}/text",
        operation_id="GetDocumentText",
        summary="Read a document's text",
        scope="read",
        raises=(DocumentNotFound, DocumentNotReady, InvalidPageRange),
    )
    async def get_text(
        self,
        conn: ConnectionDep,
        principal: PrincipalDep,
        document_id: FromPath[UUID],
        pages: FromQuery[str | None] = None,
    ) -> DocumentTextBody:
        """The stored Markdown, whole or for a page range such as ``pages=3-5``.

        Returns:
            The text; 409 document_not_ready while extraction runs or when it failed.
        """
        text = await documents.read_text(conn, principal, document_id, documents.parse_pages(pages))
        return DocumentTextBody(
            document=DocumentName(id=text.document.id, name=text.document.name),
            pages=[text.first_page, text.last_page],
            page_count=text.document.page_count or 1,
            markdown=text.markdown,
            truncated=text.truncated,
        )

    @operation(
        get,
        "/documents/{document_id:uuid}/file",
        operation_id="GetDocumentFile",
        summary="A short-lived link to a document's original",
        scope="read",
        raises=(DocumentNotFound, BlobStoreUnavailable),
    )
    async def get_file(
        self,
        runtime: RuntimeDep,
        conn: ConnectionDep,
        principal: PrincipalDep,
        document_id: FromPath[UUID],
    ) -> FileLink:
        """A short-lived URL to the original.

        Returns:
            The URL and its expiry. The file is served as the type of the kind extraction
            found in it (``application/octet-stream`` before that): a PDF inline, so
            ``#page=N`` opens that page; any other kind as a download; always sandboxed.
        """
        url = await documents.download_url(runtime, conn, principal, document_id)
        expires = datetime.now(UTC) + timedelta(
            seconds=runtime.settings.storage.download_expiry_seconds
        )
        return FileLink(url=url, expires_at=expires)

    @operation(
        get,
        "/documents/{document_id:uuid}/pages/{page:int}/image",
        operation_id="GetPageImage",
        summary="A page of a document's original as a picture, a passage marked on it",
        scope="read",
        raises=(
            DocumentNotFound,
            DocumentNotReady,
            FigureNotFound,
            NoPageImage,
            PageNotFound,
            PassageNotFound,
            PageRenderFailed,
            BlobStoreUnavailable,
        ),
        media_type="image/png",
    )
    async def get_page_image(
        self,
        runtime: RuntimeDep,
        principal: PrincipalDep,
        document_id: FromPath[UUID],
        page: FromPath[int],
        width: FromQuery[int | None] = None,
        highlight: FromQuery[str | None] = None,
        crop: FromQuery[Literal["passage"] | None] = None,
        figure: FromQuery[int | None] = None,
    ) -> Response[bytes]:
        """Page ``page`` (1-based) of the original drawn as a PNG: a PDF page, or an image
        document (its own page). ``width`` in pixels (64-2400; default 150 dpi);
        ``highlight`` a passage id (a search result's ``chunk_id``) to mark where its words
        sit; ``crop=passage`` only that passage's region, with a margin; ``figure`` (a search
        result's ``figure.number``) only that figure of the page, its caption included.

        Returns:
            The PNG, with ``X-Shortlist-Covered`` (the share of the passage's words found on
            the page, with ``highlight``) and ``X-Shortlist-Cropped`` (``false`` when the
            passage was not found and the whole page is shown); 404 ``no_page_image`` for a
            kind without pages to draw, 422 ``page_render_failed`` when the page cannot be
            drawn within the memory and time caps.
        """
        drawn = await page_images.page_image(
            runtime,
            principal,
            document_id,
            page,
            width=width,
            passage=highlight,
            crop=crop == "passage",
            figure=figure,
        )
        headers = {
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "private, max-age=300",
            "Content-Disposition": "inline",
        }
        if drawn.covered is not None:
            headers["X-Shortlist-Covered"] = f"{drawn.covered:.3f}"
        if crop == "passage":
            headers["X-Shortlist-Cropped"] = "true" if drawn.cropped else "false"
        return Response(content=drawn.png, media_type=drawn.media_type, headers=headers)

    @operation(
        delete,
        "/documents/{document_id:uuid}",
        operation_id="DeleteDocument",
        summary="Delete a document and its original",
        scope="write",
        raises=(BlobStoreUnavailable,),
    )
    async def delete_document(
        self,
        runtime: RuntimeDep,
        principal: PrincipalDep,
        document_id: FromPath[UUID],
    ) -> None:
        """Delete the document and its original. Idempotent: 204 whether or not it was there
        (403 token_read_only for a read token)."""
        # No connection is lent for the request: none is held while the store deletes.
        await documents.delete_document(runtime, principal, document_id)

    @operation(
        post,
        "/documents/{document_id:uuid}/reextract",
        operation_id="ReextractDocument",
        summary="Extract a document again",
        scope="write",
        raises=(DocumentNotFound,),
        status_code=HTTP_202_ACCEPTED,
    )
    async def reextract(
        self,
        runtime: RuntimeDep,
        conn: ConnectionDep,
        principal: PrincipalDep,
        document_id: FromPath[UUID],
    ) -> Document:
        """Extract the document again from its original.

        Returns:
            202 with the document back in ``pending``.
        """
        return Document.from_record(
            await documents.reextract(runtime, conn, principal, document_id)
        )
