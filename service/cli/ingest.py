"""``shortlist ingest PATH…``: extract files and store them in a project directly (no upload,
no queue)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from service.cli.plumbing import (
    acting_user,
    command_errors,
    file_entry,
    json_option,
    main,
    optional_user_option,
    project_option,
    report_files,
    run_with_runtime,
)
from service.runtime import Runtime
from service.services import projects
from service.settings import get_settings
from service.storage.db import connection


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@project_option
@optional_user_option
@json_option
@command_errors
def ingest(
    paths: tuple[Path, ...], project_name: str, user_name: str | None, as_json: bool
) -> None:
    """Extract files (and the supported files in folders, named by their path in the folder;
    `.shortlistignore`, dot-files, lock files and links skipped) and store them in a project
    directly (no upload, no queue)."""
    from service.services.folders import expand_paths
    from service.services.ingest import Ingested, ingest_files

    async def work(runtime: Runtime) -> list[Ingested]:
        principal = await acting_user(runtime, user_name)
        async with connection(runtime.pool) as conn:
            target = await projects.resolve_project(conn, principal.user_id, project_name)
        return await ingest_files(runtime, principal, target, expand_paths(paths))

    results = run_with_runtime(get_settings(), work)
    entries: list[dict[str, Any]] = []
    for item in results:
        if item.error is not None:
            entries.append(
                file_entry(item.name, None, "error", (item.error.code, item.error.message))
            )
            continue
        assert item.document is not None and item.outcome is not None
        failed = item.outcome.status == "error"
        error = (
            (item.outcome.error_code or "", item.outcome.error_message or "") if failed else None
        )
        entries.append(
            file_entry(item.document.name, item.document.id, "error" if failed else "ready", error)
        )
    report_files(entries, as_json=as_json)
