"""``shortlist sync DIR…``: make a project mirror the supported files under some folders.

A door like the others: it parses the folders and options and prints the report. With
``SHORTLIST_TOKEN`` set (and no ``--user``) it syncs with the running service at ``--url`` or
``SHORTLIST_SERVER__PUBLIC_URL`` over REST (:mod:`service.cli.remote_sync`); otherwise it calls
:func:`service.services.folder_sync.sync_folders` on the local runtime (the embedded defaults,
or ``DATABASE_URL``; no running service needed, like ``shortlist ingest``). Both carry out the
same plan, :func:`service.services.folder_sync.sync`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from service.cli.plumbing import (
    EXIT_USER_ERROR,
    acting_user,
    command_errors,
    emit_json,
    json_option,
    main,
    optional_user_option,
    project_option,
    run_with_runtime,
)
from service.errors import InvalidRequest
from service.runtime import Runtime
from service.services import projects
from service.settings import get_settings
from service.storage.db import connection


@main.command()
@click.argument(
    "folders",
    nargs=-1,
    required=True,
    type=click.Path(exists=True, file_okay=False, path_type=Path),
)
@project_option
@optional_user_option
@click.option(
    "--url",
    "service_url",
    default=None,
    help="With SHORTLIST_TOKEN: the service's base URL (default: the public URL setting).",
)
@json_option
@command_errors
def sync(
    folders: tuple[Path, ...],
    project_name: str | None,
    user_name: str | None,
    service_url: str | None,
    as_json: bool,
) -> None:
    """Mirror the supported files under FOLDERS into a project: add new files, re-extract
    changed ones, remove deleted ones, skip unchanged ones. A `.shortlistignore` in a folder
    (gitignore syntax) excludes files; dot-files and Office lock files are skipped. With
    SHORTLIST_TOKEN set (and no --user) it syncs with the running service; otherwise with
    the local database. Exits 2 if any file failed."""
    from service.services import folder_sync
    from service.services.folders import roots_of

    settings = get_settings()
    roots = roots_of(folders)
    if settings.token is not None and user_name is None:
        from service.cli.remote_sync import sync_remote

        token = settings.token.get_secret_value()
        report = sync_remote(service_url or settings.public_url, token, project_name, roots)
    else:
        if service_url is not None:
            raise InvalidRequest(
                "--url syncs with a running service: set SHORTLIST_TOKEN to your API token "
                "(and leave out --user)."
            )

        async def work(runtime: Runtime) -> folder_sync.Report:
            principal = await acting_user(runtime, user_name)
            async with connection(runtime.pool) as conn:
                target = await projects.resolve_project(conn, principal.user_id, project_name)
            return await folder_sync.sync_folders(runtime, principal, target.id, roots)

        report = run_with_runtime(settings, work)
    if as_json:
        emit_json(folder_sync.report_json(report))
    else:
        for entry in report.entries:
            if entry.action in ("unchanged", "ignored"):
                continue
            line = f"{entry.action:<8} {entry.path}"
            if entry.moved_from:
                line += f" (moved from {entry.moved_from})"
            if entry.reason:
                line += f": {entry.reason}"
            click.echo(line, err=entry.action == "failed")
        counts = report.counts()
        click.echo(", ".join(f"{count} {action}" for action, count in counts.items()))
    if report.failed:
        sys.exit(EXIT_USER_ERROR)
