"""Import a document from a web address: checked now, fetched and extracted by a worker.

:func:`import_url` is the operation every door calls (REST, CLI, MCP, panel). It checks the
address (see :mod:`service.services.url_fetch`; its DNS lookup holds no pooled connection),
then on a connection the ownership, the name and duplicates, and creates a ``pending``
document that remembers its source and queues its extraction. The extraction job, finding no original in the blob store yet, calls
:func:`fetch_original`, which fetches the address (checked again, hop by hop), refuses what is
not a supported document within the size limit, and stores the bytes like an upload's.
"""

from __future__ import annotations

import html
import re
import uuid
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple
from urllib.parse import unquote, urlsplit
from uuid import UUID

import anyio.to_thread

from extract.detect import ALLOWED_CONTENT_TYPES, EXTENSION_KINDS
from service.errors import DuplicateDocumentName
from service.records import Document, Principal
from service.services import projects, scopes, uploads
from service.services.filenames import clean_filename
from service.services.url_fetch import Fetched, FetchPolicy, check_url, fetch
from service.storage.db import Connection, connection, execute, fetch_one, unique_violation_as

if TYPE_CHECKING:
    from service.runtime import Runtime
    from service.settings import Settings

PENDING_CONTENT_TYPE = "application/octet-stream"
"""What an imported document is stored as until its fetch says what it is."""


def fetch_policy(settings: Settings) -> FetchPolicy:
    """The fetch rules in effect: the ``fetch`` settings and the upload size limit."""
    return FetchPolicy(
        allow_http=settings.fetch.allow_http,
        allow_private_networks=settings.fetch.allow_private_networks,
        max_redirects=settings.fetch.max_redirects,
        timeout_seconds=settings.fetch.timeout_seconds,
        max_bytes=settings.storage.max_upload_bytes,
    )


_TITLE = re.compile(rb"<title[^>]*>(.*?)</title\s*>", re.IGNORECASE | re.DOTALL)
#: Where a page's <title> is looked for: the head of any page that has one.
_TITLE_WITHIN_BYTES = 65_536
_KIND_EXTENSIONS = {kind: ext for ext, kind in reversed(list(EXTENSION_KINDS.items()))}
"""Each kind's usual extension (the first one :data:`EXTENSION_KINDS` lists for it)."""


def fetched_name(name: str, data: bytes, content_type: str) -> str:
    """The name an import named from its address gets once its content is known: a web
    page's title, else the address's name, with the extension of the kind fetched."""
    kind = ALLOWED_CONTENT_TYPES.get(content_type.split(";")[0].strip().lower())
    if kind is None:
        return name
    extension = _KIND_EXTENSIONS[kind]
    stem = name
    if kind == "html":
        found = _TITLE.search(data[:_TITLE_WITHIN_BYTES])
        title = (
            " ".join(html.unescape(found.group(1).decode("utf-8", "replace")).split())
            if found
            else ""
        )
        stem = title[:150] or name
    if EXTENSION_KINDS.get(PurePosixPath(stem).suffix.lower()) == kind:
        return clean_filename(stem)
    return clean_filename(f"{stem}{extension}")


def name_from_url(url: str) -> str:
    """A document name for an address: its last path segment, else its host."""
    parts = urlsplit(url)
    segment = unquote(PurePosixPath(parts.path).name) if parts.path not in ("", "/") else ""
    return segment.strip() or (parts.hostname or "imported document")


class CheckedImport(NamedTuple):
    """An address that passed every check needing no connection: ready to be imported."""

    url: str


async def check_import(runtime: Runtime, principal: Principal, url: str) -> CheckedImport:
    """The checks of an import that need no database: the caller may write, is within its
    upload budget (imports count against it), and the address is one Shortlist fetches from.

    The host is resolved here, within the fetch deadline, so call this **before** taking a
    pooled connection: a slow DNS answer then holds none.
    """
    scopes.require_write(principal)
    runtime.upload_limiter.check(str(principal.token_id))
    url = url.strip()
    await check_url(url, fetch_policy(runtime.settings), runtime.resolve)
    return CheckedImport(url)


async def create_import(
    runtime: Runtime,
    conn: Connection,
    principal: Principal,
    checked: CheckedImport,
    *,
    project_id: UUID,
    filename: str | None = None,
) -> Document:
    """A new pending document for a checked address in the caller's project, its fetch
    queued. Raises a bad or duplicate name, or an unknown project, before anything is stored."""
    await projects.get_project(conn, principal.user_id, project_id)
    url = checked.url
    name = clean_filename(filename if filename and filename.strip() else name_from_url(url))
    await uploads.ensure_name_is_free(conn, project_id, name)
    duplicate = DuplicateDocumentName(
        f"A document named {name!r} is already in this project; give the import another name."
    )
    with unique_violation_as(duplicate):
        row = await fetch_one(
            conn,
            "insert_imported_document",
            project_id=project_id,
            name=name,
            content_type=PENDING_CONTENT_TYPE,
            object_key=uploads.object_key(project_id, uuid.uuid4()),
            source_url=url,
        )
    assert row is not None
    document = Document.from_row(row)
    await runtime.jobs.enqueue_extraction(document.id)
    return document


async def import_url(
    runtime: Runtime,
    principal: Principal,
    *,
    project_id: UUID,
    url: str,
    filename: str | None = None,
) -> Document:
    """A new pending document for ``url`` in the caller's project, its fetch queued.

    A stranger's or unknown project is refused first; then :func:`check_import`, holding
    no connection (its DNS lookup may be slow); then :func:`create_import` on one. Raises the
    refusal (an unknown project, ``url_not_allowed``, ``url_unreachable`` for a host that does
    not resolve in time, a bad or duplicate name) before anything is stored.
    """
    scopes.require_write(principal)
    async with connection(runtime.pool) as conn:
        await projects.get_project(conn, principal.user_id, project_id)
    checked = await check_import(runtime, principal, url)
    async with connection(runtime.pool) as conn:
        return await create_import(
            runtime, conn, principal, checked, project_id=project_id, filename=filename
        )


async def fetch_original(
    runtime: Runtime, document_id: UUID, *, url: str, key: str, name: str
) -> Fetched:
    """Fetch an imported document's original into the blob store, once.

    Raises :class:`~service.errors.UrlRefused` (not allowed, unreachable, too large, not a
    supported type); the caller records it on the document.
    """
    fetched = await fetch(url, fetch_policy(runtime.settings), runtime.resolve)
    # As for an upload, the response's type only picks a kind; the kind's own type is kept.
    _, content_type = uploads.check_file(runtime, name, fetched.content_type, len(fetched.data))
    fetched = fetched._replace(content_type=content_type)
    await anyio.to_thread.run_sync(lambda: runtime.blobs.write(key, fetched.data, content_type))
    async with connection(runtime.pool) as conn:
        await execute(
            conn,
            "store_fetched_original",
            document_id=document_id,
            size_bytes=len(fetched.data),
            content_type=fetched.content_type,
        )
        if name == clean_filename(name_from_url(url)):  # not a name the importer chose
            better = fetched_name(name, fetched.data, content_type)
            if better != name:
                await execute(
                    conn, "rename_imported_document", document_id=document_id, name=better
                )
    return fetched
