"""``shortlist documents list|show|delete|reextract``: a project's documents from a terminal.

Like ``search`` and ``ingest``, these act on the local database for ``--user``, else the user of
``SHORTLIST_TOKEN``, else the only user; a document is named by its id (in any of the user's
projects) or its exact name in ``--project`` (:func:`service.services.documents.find_document`).
``--json`` prints the same document shape as the REST API.
"""

from __future__ import annotations

from typing import Any

import click
import msgspec

from service.cli.plumbing import (
    acting_user,
    command_errors,
    emit_json,
    json_option,
    main,
    optional_user_option,
    project_option,
    run_with_runtime,
)
from service.http.schemas import Document as DocumentBody
from service.records import Document
from service.runtime import Runtime
from service.services import documents, projects
from service.settings import get_settings
from service.storage.db import connection

document_argument = click.argument("reference", metavar="DOCUMENT")


def _body(document: Document) -> dict[str, Any]:
    """The REST shape of a document, as plain JSON values."""
    encoded: dict[str, Any] = msgspec.json.decode(
        msgspec.json.encode(DocumentBody.from_record(document))
    )
    return encoded


def _status(document: Document) -> str:
    failure = documents.failure_of(document)
    if failure is not None:
        return f"error: {failure.message}" + (f" ({failure.hint})" if failure.hint else "")
    count = document.page_count
    pages = f", {count} page{'' if count == 1 else 's'}" if count else ""
    return f"{document.status}{pages}"


@main.group("documents")
def documents_group() -> None:
    """List, show, delete and re-extract a project's documents."""


@documents_group.command("list")
@project_option
@optional_user_option
@json_option
@command_errors
def documents_list(project_name: str | None, user_name: str | None, as_json: bool) -> None:
    """List a project's documents with their status."""

    async def work(runtime: Runtime) -> list[Document]:
        principal = await acting_user(runtime, user_name)
        async with connection(runtime.pool) as conn:
            target = await projects.resolve_project(conn, principal.user_id, project_name)
            return await documents.list_documents(conn, principal, target.id)

    found = run_with_runtime(get_settings(), work)
    if as_json:
        emit_json({"documents": [_body(document) for document in found]})
        return
    for document in found:
        click.echo(f"{document.name}\t{document.id}\t{_status(document)}")


def _one(
    reference: str,
    project_name: str | None,
    user_name: str | None,
    action: Any,
) -> Document:
    """Run ``action(runtime, conn, principal, document)`` on the named document."""

    async def work(runtime: Runtime) -> Document:
        principal = await acting_user(runtime, user_name)
        async with connection(runtime.pool) as conn:
            found = await documents.find_document(conn, principal, reference, project_name)
            result: Document = await action(runtime, conn, principal, found)
            return result

    return run_with_runtime(get_settings(), work)


@documents_group.command("show")
@document_argument
@project_option
@optional_user_option
@json_option
@command_errors
def documents_show(
    reference: str, project_name: str | None, user_name: str | None, as_json: bool
) -> None:
    """One document's metadata, status and warnings."""

    async def same(_runtime: Runtime, _conn: Any, _principal: Any, found: Document) -> Document:
        return found

    found = _one(reference, project_name, user_name, same)
    if as_json:
        emit_json(_body(found))
        return
    click.echo(f"{found.name}  ({found.id})")
    click.echo(f"  status: {_status(found)}")
    click.echo(f"  kind: {found.kind or '—'}, {found.size_bytes} bytes, {found.content_type}")
    for warning in found.warnings:
        click.echo(f"  warning: {warning}")


@documents_group.command("delete")
@document_argument
@project_option
@optional_user_option
@json_option
@command_errors
def documents_delete(
    reference: str, project_name: str | None, user_name: str | None, as_json: bool
) -> None:
    """Delete a document and its original."""

    async def delete(runtime: Runtime, conn: Any, principal: Any, found: Document) -> Document:
        await documents.delete_document(runtime, principal, found.id)
        return found

    found = _one(reference, project_name, user_name, delete)
    if as_json:
        emit_json({"deleted": {"id": found.id, "name": found.name}})
        return
    click.echo(f"Deleted {found.name!r}.")


@documents_group.command("reextract")
@document_argument
@project_option
@optional_user_option
@json_option
@command_errors
def documents_reextract(
    reference: str, project_name: str | None, user_name: str | None, as_json: bool
) -> None:
    """Queue a document's extraction again (a running worker or `shortlist serve` does it)."""

    async def again(runtime: Runtime, conn: Any, principal: Any, found: Document) -> Document:
        return await documents.reextract(runtime, conn, principal, found.id)

    found = _one(reference, project_name, user_name, again)
    if as_json:
        emit_json(_body(found))
        return
    click.echo(f"Queued {found.name!r} for extraction again.")
