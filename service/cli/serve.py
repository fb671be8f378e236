"""``shortlist serve``: the web service (REST, MCP over HTTP, the panel) in this process."""

from __future__ import annotations

import logging
import shutil
import sys
from pathlib import Path

import click

from service.cli.plumbing import (
    main,
)
from service.runtime import Runtime
from service.services import users
from service.settings import get_settings
from service.storage.db import connection


@main.command()
@click.option("--host", default=None, help="Interface to bind (setting: SHORTLIST_SERVER__HOST).")
@click.option(
    "--port", type=int, default=None, help="Port to listen on (setting: SHORTLIST_SERVER__PORT)."
)
@click.option(
    "--worker/--no-worker",
    default=None,
    help="Run an extraction worker in this process (setting: SHORTLIST_SERVER__RUN_WORKER).",
)
def serve(host: str | None, port: int | None, worker: bool | None) -> None:
    """Run the web service (REST API, MCP at /mcp, panel at /)."""
    import uvicorn

    from service.app import create_app
    from service.http.timeouts import h11_protocol

    settings = get_settings()
    if host is not None:
        settings.server.host = host
    if port is not None:
        settings.server.port = port
    if worker is not None:
        settings.server.run_worker = worker
    logging.getLogger("service").setLevel(settings.server.log_level.upper())
    click.echo(
        f"Shortlist is starting at {settings.public_url}  (API docs: {settings.public_url}/schema)"
    )
    if settings.database_url is None:
        click.echo(
            f"Database: embedded PostgreSQL in {settings.database.embedded_dir or settings.data_dir / 'postgres'}"
        )
    program = invoked_as()

    async def greet_first_run(runtime: Runtime) -> None:
        async with connection(runtime.pool) as conn:
            if not await users.list_users(conn):
                click.echo(f"No users yet. Create one and get a token: {program} user create NAME")

    uvicorn.run(
        create_app(settings, on_start=greet_first_run),
        host=settings.server.host,
        port=settings.server.port,
        log_level=settings.server.log_level,
        proxy_headers=True,
        http=h11_protocol(settings.server.header_timeout_seconds),
    )


def invoked_as() -> str:
    """How to name this command in a hint: ``shortlist`` when that is what the shell finds,
    else the path it was started by (``.venv/bin/shortlist`` for a README install)."""
    started = Path(sys.argv[0])
    if started.name != "shortlist":
        return "shortlist"  # python -m service.cli, or an embedding program
    on_path = shutil.which("shortlist")
    if on_path is not None and Path(on_path).resolve() == started.resolve():
        return "shortlist"
    return str(sys.argv[0])
