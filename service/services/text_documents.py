"""A document made from text an assistant hands over (the MCP tool ``add_document``).

The text becomes a file like any upload: the same checks (size limit, name, duplicates, the
caller's upload budget), kept as the original in the blob store, extracted by the sandboxed
extractor into page-marked Markdown, then searchable. It is extracted at once, so the answer
says whether it is searchable.
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

from extract.detect import EXTENSION_KINDS, KIND_CONTENT_TYPES
from service.errors import InvalidRequest
from service.records import Document, Principal
from service.services import documents, projects, scopes
from service.services.extraction import Outcome, extract_and_save
from service.services.ingest import store_new_document
from service.storage.db import connection

if TYPE_CHECKING:
    from service.runtime import Runtime

#: The kinds handed-over text may be; a name without one of their extensions gets ``.md``.
TEXT_KINDS = ("markdown", "text")
DEFAULT_SUFFIX = ".md"


class Added(NamedTuple):
    document: Document
    """The document as saved: ``ready``, or ``error`` with why."""
    outcome: Outcome


def text_document_name(name: str) -> str:
    """``name`` when it ends in a Markdown or text extension, else ``name`` + ``.md``."""
    stripped = name.strip()
    suffix = PurePosixPath(stripped).suffix.lower()
    if EXTENSION_KINDS.get(suffix) in TEXT_KINDS:
        return stripped
    return stripped + DEFAULT_SUFFIX


async def add_text_document(
    runtime: Runtime, principal: Principal, *, project_id: UUID, name: str, content: str
) -> Added:
    """Store ``content`` (Markdown or plain text) as a new document of the caller's project
    and extract it. Raises the refusal (unknown project, empty content, too large, bad or
    duplicate name, rate limit) before anything is stored."""
    scopes.require_write(principal)
    runtime.upload_limiter.check(str(principal.token_id))
    async with connection(runtime.pool) as conn:
        await projects.get_project(conn, principal.user_id, project_id)
    if not name.strip():
        raise InvalidRequest("Give the document a name, e.g. notes.md.", field="name")
    if not content.strip():
        raise InvalidRequest("The content is empty: pass the document's text.", field="content")
    if "\x00" in content:
        raise InvalidRequest("The content may not contain NUL characters.", field="content")
    filename = text_document_name(name)
    kind = EXTENSION_KINDS.get(PurePosixPath(filename).suffix.lower(), "markdown")
    content_type = KIND_CONTENT_TYPES.get(kind, "text/markdown")
    data = content.encode("utf-8")
    stored = await store_new_document(runtime, project_id, data, filename, content_type)
    outcome = await extract_and_save(runtime, stored.id, data, stored.name, stored.content_type)
    async with connection(runtime.pool) as conn:
        saved = await documents.get_document(conn, principal, stored.id)
    return Added(saved, outcome)
