"""The ``shortlist`` group and what its commands share: the options every group takes, who a
local command acts as, running work on the runtime, error rendering and JSON output.

Contract (scripts and tests rely on it): every command that reports data takes
``--json`` and then prints exactly one JSON document on stdout; the exit code
is 0 on success, 2 on a user error (bad input, refused), 1 on an internal
failure.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import sys
from collections.abc import Awaitable, Callable
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar
from uuid import UUID

import click

from service.errors import InvalidRequest, ServiceUnreachable, as_shortlist_error
from service.records import Principal, User
from service.runtime import Runtime, open_runtime
from service.services import users
from service.settings import Settings, get_settings
from service.storage.db import Connection, connection

P = ParamSpec("P")
T = TypeVar("T")

EXIT_USER_ERROR = 2
EXIT_INTERNAL_ERROR = 1


def _json_default(value: Any) -> Any:
    if isinstance(value, UUID | Path):
        return str(value)
    if isinstance(value, datetime):
        return value.isoformat()
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    raise TypeError(f"cannot encode {type(value).__name__}")


def emit_json(document: Any) -> None:
    """Print exactly one JSON document on stdout."""
    click.echo(json.dumps(document, default=_json_default, ensure_ascii=False))


def fail(message: str, *, code: str, as_json: bool, exit_code: int = EXIT_USER_ERROR) -> NoReturn:
    """Report an error (JSON on stdout with --json, else text on stderr) and exit."""
    if as_json:
        emit_json({"error": {"code": code, "message": message}})
    else:
        click.echo(f"Error: {message}", err=True)
    sys.exit(exit_code)


def command_errors(func: Callable[P, T]) -> Callable[P, T]:
    """Render errors as the other doors do: any error users may see (a ShortlistError, or a
    component's error with its status and code, as :func:`as_shortlist_error` says) exits 2
    (1 for a 5xx); anything else exits 1 as an internal error."""

    @functools.wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        as_json = bool(kwargs.get("as_json", False))
        try:
            return func(*args, **kwargs)
        except (click.exceptions.Exit, click.ClickException, SystemExit, KeyboardInterrupt):
            raise
        except Exception as exc:
            error = as_shortlist_error(exc)
            if error is not None:
                # A service that is not running is for the user to start, not our failure.
                internal = error.status >= 500 and not isinstance(error, ServiceUnreachable)
                exit_code = EXIT_INTERNAL_ERROR if internal else EXIT_USER_ERROR
                fail(error.message, code=error.code, as_json=as_json, exit_code=exit_code)
            logging.getLogger("shortlist").debug("internal error", exc_info=True)
            fail(
                f"internal error: {exc.__class__.__name__}: {exc}",
                code="internal_error",
                as_json=as_json,
                exit_code=EXIT_INTERNAL_ERROR,
            )

    return wrapper


def file_entry(
    name: str, document_id: Any, status: str, error: tuple[str, str] | None
) -> dict[str, Any]:
    """One file's line of `ingest --json` / `upload --json`."""
    return {
        "document": {"id": document_id, "name": name},
        "status": status,
        "error": {"code": error[0], "message": error[1]} if error else None,
    }


def report_files(entries: list[dict[str, Any]], *, as_json: bool) -> None:
    """Print one entry per file; exit 2 if any file ended in error."""
    if as_json:
        emit_json(entries)
    else:
        for entry in entries:
            reason = f" — {entry['error']['message']}" if entry["error"] else ""
            click.echo(f"{entry['status']:10} {entry['document']['name']}{reason}")
    if any(entry["status"] == "error" for entry in entries):
        sys.exit(EXIT_USER_ERROR)


def run_with_runtime(
    settings: Settings, work: Callable[[Runtime], Awaitable[T]], *, background: bool = False
) -> T:
    """Open the runtime (database, migrations, pool), run ``work``, close it all.

    One-shot by default: nothing is warmed in the background (a search would
    otherwise queue its whole project); long-running commands pass ``background=True``.
    """

    async def main() -> T:
        async with open_runtime(settings, background=background) as runtime:
            return await work(runtime)

    return asyncio.run(main())


def run_for_user(user_name: str, action: Callable[[Connection, User], Awaitable[T]]) -> T:
    """Open the runtime, look up the user named ``user_name`` and run ``action`` for them
    on one connection."""

    async def work(runtime: Runtime) -> T:
        async with connection(runtime.pool) as conn:
            owner = await users.get_user_by_name(conn, user_name)
            return await action(conn, owner)

    return run_with_runtime(get_settings(), work)


#: Stands in for a token id when a local command acts for a user directly.
CLI_TOKEN_ID = UUID(int=0)


async def acting_user(runtime: Runtime, user_name: str | None) -> Principal:
    """Who a local command acts as: --user, else the SHORTLIST_TOKEN's user, else the only user."""
    async with connection(runtime.pool) as conn:
        if user_name:
            found = await users.get_user_by_name(conn, user_name)
            return Principal(user_id=found.id, user_name=found.name, token_id=CLI_TOKEN_ID)
        if runtime.settings.token is not None:
            return await users.authenticate(conn, runtime.settings.token.get_secret_value())
        everyone = await users.list_users(conn)
    if len(everyone) == 1:
        return Principal(user_id=everyone[0].id, user_name=everyone[0].name, token_id=CLI_TOKEN_ID)
    raise InvalidRequest("Say which user with --user NAME (or set SHORTLIST_TOKEN).")


json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document on stdout."
)
optional_user_option = click.option(
    "--user",
    "user_name",
    default=None,
    help="Act as this user (default: SHORTLIST_TOKEN's user, or the only user).",
)
project_option = click.option(
    "--project",
    "project_name",
    default=None,
    help="Project name or id (default: your only project, else the one named 'default').",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="shortlist")
def main() -> None:
    """Shortlist: document search for AI assistants and the people who use them."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
