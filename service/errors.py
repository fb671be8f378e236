"""Errors the service reports to its users, each with an HTTP status and a stable code.

Every error a client can see is a :class:`ShortlistError`. The REST layer turns
one into the JSON envelope ``{"status": 404, "code": "project_not_found",
"message": "..."}`` (see :mod:`service.http.errors`), the CLI prints the message
and exits 2 (1 for a 5xx), and the MCP tools return it as an ``isError`` result.
A subclass's docstring is its default message::

    ShortlistError
    ├── InvalidRequest (400)
    │   ├── EmptyName
    │   ├── InvalidPageRange
    │   ├── InvalidContentType
    │   ├── PortInUse (``shortlist serve``)
    │   └── FileUnreadable (a local file the CLI was given)
    ├── NotAuthenticated (401)
    ├── TokenReadOnly (403)
    ├── RequestTimedOut (408)
    ├── NotFound (404)
    │   ├── UserNotFound, ProjectNotFound, DocumentNotFound, UploadNotFound, TokenNotFound
    │   ├── DocumentRequestNotFound
    │   └── NoPageImage, PageNotFound, PassageNotFound, FigureNotFound (page images)
    ├── Conflict (409)
    │   ├── UserExists, ProjectExists, DuplicateDocumentName, DocumentNotReady, UploadAlreadyUsed
    │   └── DocumentRequestAlreadyApproved, TooManyDocumentRequests, SyncPathTaken
    ├── PageRenderFailed (422)
    ├── UploadRefused (4xx: 413 too large, 415 type, 400 file not in the store)
    ├── UrlRefused (4xx: 400 not allowed, 422 unreachable, 413 too large, 415 type or encoding)
    ├── RateLimited (429)
    ├── ServiceUnavailable (503)
    │   ├── DatabaseUnavailable
    │   └── ServiceUnreachable (the CLI's client found no service at the URL)
    ├── BlobStoreError and its tree (service/storage/blobs/errors.py)
    ├── EmbeddedPostgresUnavailable and its tree (service/storage/embedded_pg/errors.py; under ServiceUnavailable)
    └── ComponentError (an error of retrieval/, or one a service answered the CLI's client,
                        carried with its own status and code)
"""

from __future__ import annotations

from typing import Any

from retrieval.errors import RetrievalError


class ShortlistError(Exception):
    """Something went wrong."""

    status: int = 500
    code: str = "internal_error"

    def __init__(self, message: str | None = None, **details: Any) -> None:
        # A docstring wrapped over lines is one sentence: its line breaks and indents collapse.
        self.message = message or " ".join((self.__doc__ or self.code).split())
        self.details = details
        super().__init__(self.message)

    def to_dict(self) -> dict[str, Any]:
        """The JSON error envelope."""
        body: dict[str, Any] = {"status": self.status, "code": self.code, "message": self.message}
        if self.details:
            body["details"] = self.details
        return body


class InvalidRequest(ShortlistError):
    """The request is not valid."""

    status = 400
    code = "invalid_request"


class EmptyName(InvalidRequest):
    """A name may not be empty."""

    code = "empty_name"


class InvalidPageRange(InvalidRequest):
    """Pages must be a number or a range such as 3-5, within the document."""

    code = "invalid_page_range"


class InvalidContentType(InvalidRequest):
    """The content type must be a media type such as `application/pdf` or `text/plain; charset=utf-8`."""

    code = "invalid_content_type"


class FileUnreadable(InvalidRequest):
    """A local file could not be read (gone, not permitted, or a read error); the other files
    of the command carry on."""

    code = "file_unreadable"

    def __init__(self, path: object, error: OSError) -> None:
        super().__init__(f"Cannot read {path}: {error.strerror or error}", path=str(path))


class NotAuthenticated(ShortlistError):
    """A valid API token is required: send `Authorization: Bearer <token>`."""

    status = 401
    code = "not_authenticated"


class TokenReadOnly(ShortlistError):
    """This token may only read (search, list, read documents); ask the project owner for a write
    token to change the project."""

    status = 403
    code = "token_read_only"


class RequestTimedOut(ShortlistError):
    """The request did not arrive in time; send it again."""

    status = 408
    code = "request_timeout"


class NotFound(ShortlistError):
    """Not found."""

    status = 404
    code = "not_found"


class UserNotFound(NotFound):
    """No such user."""

    code = "user_not_found"


class ProjectNotFound(NotFound):
    """No such project, or it belongs to someone else."""

    code = "project_not_found"


class DocumentNotFound(NotFound):
    """No such document, or it belongs to someone else."""

    code = "document_not_found"


class UploadNotFound(NotFound):
    """No such upload: ask POST /api/uploads for a grant first."""

    code = "upload_not_found"


class TokenNotFound(NotFound):
    """No live token matches."""

    code = "token_not_found"


class NoPageImage(NotFound):
    """This kind of document has no page images (only PDFs and images do); read its text or
    open its original instead."""

    code = "no_page_image"


class PageNotFound(NotFound):
    """The document has no such page."""

    code = "page_not_found"


class PassageNotFound(NotFound):
    """No passage of this document has that id (ids come from search results, and change
    when the document is extracted again)."""

    code = "passage_not_found"


class FigureNotFound(NotFound):
    """The document has no such figure on that page (figure numbers come from search results'
    `figure`, and change when the document is extracted again)."""

    code = "figure_not_found"


class DocumentRequestNotFound(NotFound):
    """No such document request in this project."""

    code = "document_request_not_found"


class Conflict(ShortlistError):
    """The request conflicts with the current state."""

    status = 409
    code = "conflict"


class UserExists(Conflict):
    """A user with that name already exists."""

    code = "user_exists"


class ProjectExists(Conflict):
    """You already have a project with that name."""

    code = "project_exists"


class DuplicateDocumentName(Conflict):
    """A document with that name is already in the project; rename the file or delete the old one."""

    code = "duplicate_document_name"


class DocumentNotReady(Conflict):
    """The document has no text yet: it is still being extracted or its extraction failed."""

    code = "document_not_ready"


class UploadAlreadyUsed(Conflict):
    """That upload was already registered as a document."""

    code = "upload_already_used"


class DocumentRequestAlreadyApproved(Conflict):
    """That document request was already approved; its import is the project's document."""

    code = "document_request_already_approved"


class TooManyDocumentRequests(Conflict):
    """The project holds as many pending document requests as it may; the owner has to approve
    some before more can be logged."""

    code = "too_many_document_requests"


class SyncPathTaken(Conflict):
    """Another document of the project already mirrors that file of a synced folder."""

    code = "sync_path_taken"


class PageRenderFailed(ShortlistError):
    """The page could not be drawn: the original is damaged, or drawing it needed more memory
    or time than allowed."""

    status = 422
    code = "page_render_failed"


class UploadRefused(ShortlistError):
    """The upload was refused."""

    status = 400
    code = "upload_refused"


class FileTooLarge(UploadRefused):
    """The file is larger than the upload limit."""

    status = 413
    code = "file_too_large"


class UnsupportedFileType(UploadRefused):
    """That kind of file cannot be searched; the message names the kinds that can."""

    status = 415
    code = "unsupported_file_type"


class UploadIncomplete(UploadRefused):
    """The blob store does not hold the file the grant allowed (missing, or a different size)."""

    code = "upload_incomplete"


class UrlRefused(ShortlistError):
    """That address cannot be imported."""

    status = 400
    code = "url_refused"


class UrlNotAllowed(UrlRefused):
    """Shortlist does not fetch from that address (only public https:// addresses)."""

    code = "url_not_allowed"


class UrlUnreachable(UrlRefused):
    """The address could not be fetched (no such host, no answer, or not the document)."""

    status = 422
    code = "url_unreachable"


class UrlTooLarge(UrlRefused):
    """The document at the address is larger than the upload limit."""

    status = 413
    code = "url_too_large"


class UrlUnsupportedType(UrlRefused):
    """The address does not serve a supported kind of document."""

    status = 415
    code = "url_unsupported_type"


class UrlUnsupportedEncoding(UrlRefused):
    """The address compressed the document in a way Shortlist does not decode (nested, or
    not gzip or deflate)."""

    status = 415
    code = "url_unsupported_encoding"


class PortInUse(InvalidRequest):
    """The port is in use by another program; choose another with --port."""

    code = "port_in_use"

    def __init__(self, port: int) -> None:
        super().__init__(f"port {port} is in use; choose another with --port", port=port)


class RateLimited(ShortlistError):
    """Too many requests; wait and try again."""

    status = 429
    code = "rate_limited"

    def __init__(self, retry_after: int, message: str | None = None) -> None:
        super().__init__(message, retry_after=retry_after)
        self.retry_after = retry_after


class ServiceUnavailable(ShortlistError):
    """The service cannot answer right now; try again shortly."""

    status = 503
    code = "service_unavailable"


class ServiceUnreachable(ServiceUnavailable):
    """The Shortlist service cannot be reached: is `shortlist serve` running?"""

    code = "service_unreachable"

    def __init__(self, url: str) -> None:
        super().__init__(
            f"Cannot reach the Shortlist service at {url}: is `shortlist serve` running? "
            "(Set SHORTLIST_SERVER__PUBLIC_URL or pass --url for another address.)",
            url=url,
        )


class DatabaseUnavailable(ServiceUnavailable):
    """The database cannot be reached; try again shortly."""

    code = "database_unavailable"


class ComponentError(ShortlistError):
    """An error of the retrieval core, or one a running service answered the CLI's client,
    carried with its own status and code."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


def as_shortlist_error(exc: BaseException) -> ShortlistError | None:
    """The error as users see it: a :class:`ShortlistError` as it is, an error of the retrieval
    core (which carries its own ``status`` and ``code``) as a :class:`ComponentError`, and
    ``None`` for anything else (an internal error).

    The pure packages keep their own error trees; this is where ``retrieval.errors`` meets the
    service's. Extraction errors never reach a door as errors: a document's failure is
    recorded on the document (``service/services/extraction.py``).
    """
    if isinstance(exc, ShortlistError):
        return exc
    if isinstance(exc, RetrievalError):
        return ComponentError(exc.status, exc.code, exc.message)
    return None
