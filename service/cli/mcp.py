"""``shortlist mcp``: the MCP tools over stdio, for assistants that launch a process."""

from __future__ import annotations

import click

from service.cli.plumbing import (
    acting_user,
    command_errors,
    main,
    optional_user_option,
    run_with_runtime,
)
from service.runtime import Runtime
from service.settings import get_settings


@main.command("mcp")
@click.option(
    "--project",
    "project_name",
    default=None,
    help="Project the tools use when a call names none (default: your only project, else 'default').",
)
@optional_user_option
@command_errors
def mcp_command(project_name: str | None, user_name: str | None) -> None:
    """Serve the MCP tools over stdio, for assistants that launch a process."""
    from service.mcp.stdio import serve_stdio

    async def work(runtime: Runtime) -> None:
        principal = await acting_user(runtime, user_name)
        await serve_stdio(runtime, principal, project_name)

    run_with_runtime(get_settings(), work, background=True)
