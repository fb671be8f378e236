"""``shortlist user|project|token``: users, their projects and their API tokens, on the local
database."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import click

from service.cli.plumbing import (
    command_errors,
    emit_json,
    json_option,
    main,
    run_for_user,
    run_with_runtime,
)
from service.records import TokenScope
from service.runtime import Runtime
from service.services import projects, scopes, users
from service.settings import get_settings
from service.storage.db import connection


@main.group()
def user() -> None:
    """Create and list users."""


scope_option = click.option(
    "--scope",
    type=click.Choice(scopes.SCOPES),
    default=scopes.DEFAULT_SCOPE,
    show_default=True,
    help="What the token may do: read (search, list, read) or write (also change projects).",
)


@user.command("create")
@click.argument("name")
@scope_option
@json_option
@command_errors
def user_create(name: str, scope: TokenScope, as_json: bool) -> None:
    """Create a user with an API token and a default project. The token is shown once."""

    async def work(runtime: Runtime) -> users.NewUser:
        async with connection(runtime.pool) as conn:
            return await users.create_user(conn, name, scope=scope)

    created = run_with_runtime(get_settings(), work)
    document = {
        "user": {"id": created.user.id, "name": created.user.name},
        "token": created.token,
        "scope": scope,
        "project": {"id": created.project.id, "name": created.project.name},
    }
    if as_json:
        emit_json(document)
        return
    click.echo(f"Created user {created.user.name!r} with project {created.project.name!r}.")
    click.echo(f"API token ({scope}; shown once, keep it safe): {created.token}")


@user.command("list")
@json_option
@command_errors
def user_list(as_json: bool) -> None:
    """List users."""

    async def work(runtime: Runtime) -> list[Any]:
        async with connection(runtime.pool) as conn:
            return await users.list_users(conn)

    found = run_with_runtime(get_settings(), work)
    if as_json:
        emit_json(
            {"users": [{"id": u.id, "name": u.name, "created_at": u.created_at} for u in found]}
        )
        return
    for item in found:
        click.echo(f"{item.name}\t{item.id}")


@main.group()
def project() -> None:
    """Create and list a user's projects."""


user_option = click.option(
    "--user", "user_name", required=True, help="The user who owns the projects."
)


@project.command("create")
@click.argument("name")
@user_option
@json_option
@command_errors
def project_create(name: str, user_name: str, as_json: bool) -> None:
    """Create a project for a user."""

    created = run_for_user(
        user_name, lambda conn, owner: projects.create_project(conn, owner.id, name)
    )
    if as_json:
        emit_json({"project": {"id": created.id, "name": created.name}})
        return
    click.echo(f"Created project {created.name!r} ({created.id}).")


@project.command("list")
@user_option
@json_option
@command_errors
def project_list(user_name: str, as_json: bool) -> None:
    """List a user's projects."""

    found = run_for_user(user_name, lambda conn, owner: projects.list_projects(conn, owner.id))
    if as_json:
        emit_json(
            {
                "projects": [
                    {
                        "id": p.id,
                        "name": p.name,
                        "document_count": p.document_count,
                        "ready_count": p.ready_count,
                    }
                    for p in found
                ]
            }
        )
        return
    for item in found:
        click.echo(
            f"{item.name}\t{item.id}\t{item.ready_count}/{item.document_count} documents ready"
        )


@main.group()
def token() -> None:
    """Create, list and revoke API tokens."""


@token.command("create")
@user_option
@click.option("--label", default="", help="A note saying what the token is for.")
@scope_option
@json_option
@command_errors
def token_create(user_name: str, label: str, scope: TokenScope, as_json: bool) -> None:
    """Create another API token for a user (a read token for an assistant that should only
    search). It is shown once."""

    secret, created = run_for_user(
        user_name,
        lambda conn, owner: users.create_token(conn, owner.id, label=label, scope=scope),
    )
    if as_json:
        emit_json(
            {
                "token": secret,
                "id": created.id,
                "prefix": created.prefix,
                "label": created.label,
                "scope": created.scope,
            }
        )
        return
    click.echo(f"API token ({created.scope}; shown once, keep it safe): {secret}")


@token.command("list")
@user_option
@json_option
@command_errors
def token_list(user_name: str, as_json: bool) -> None:
    """List a user's tokens (prefixes only; tokens themselves are never stored)."""

    found = run_for_user(user_name, lambda conn, owner: users.list_tokens(conn, owner.id))
    if as_json:
        emit_json({"tokens": [asdict(t) for t in found]})
        return
    for item in found:
        state = f"revoked {item.revoked_at:%Y-%m-%d}" if item.revoked_at else "live"
        click.echo(f"{item.prefix}\t{item.scope}\t{state}\t{item.label}")


@token.command("revoke")
@click.argument("prefix")
@json_option
@command_errors
def token_revoke(prefix: str, as_json: bool) -> None:
    """Revoke a token by its prefix (the 8 characters after sl_), its id, or the token itself."""

    async def work(runtime: Runtime) -> list[Any]:
        async with connection(runtime.pool) as conn:
            return await users.revoke_token(conn, prefix)

    revoked = run_with_runtime(get_settings(), work)
    if as_json:
        emit_json({"revoked": [asdict(t) for t in revoked]})
        return
    click.echo(f"Revoked {len(revoked)} token(s).")
