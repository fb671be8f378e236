"""The ``shortlist`` command.

Contract (scripts and tests rely on it): every command that reports data takes
``--json`` and then prints exactly one JSON document on stdout; the exit code
is 0 on success, 2 on a user error (bad input, refused), 1 on an internal
failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import shutil
import signal
import sys
import textwrap
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, is_dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, NoReturn, ParamSpec, TypeVar
from uuid import UUID

import click
import msgspec

from service.errors import InvalidRequest, ServiceUnreachable, ShortlistError, as_shortlist_error
from service.records import Principal, TokenScope, User
from service.runtime import Runtime, open_runtime
from service.services import projects, scopes, users
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


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON document on stdout."
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="shortlist")
def main() -> None:
    """Shortlist: document search for AI assistants and the people who use them."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")


# --- serve -----------------------------------------------------------------


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


# --- config ----------------------------------------------------------------


@main.command()
@json_option
def config(as_json: bool) -> None:
    """Print the effective settings, secrets masked; values left unset show what is in effect."""
    settings = get_settings()
    effective = settings.masked()
    effective["server"]["public_url"] = settings.public_url
    effective["resolved"] = {
        "public_url": settings.public_url,
        "storage_backend": settings.storage_backend,
        "reranker": settings.reranker_kind,
        "database": "external (DATABASE_URL)" if settings.database_url else "embedded",
    }
    if as_json:
        emit_json(effective)
        return
    for line in _flatten(effective):
        click.echo(line)


def _flatten(value: dict[str, Any], prefix: str = "") -> list[str]:
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.extend(_flatten(item, f"{prefix}{key}."))
        else:
            lines.append(f"{prefix}{key} = {item}")
    return lines


# --- users -----------------------------------------------------------------


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


# --- projects --------------------------------------------------------------


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


# --- tokens ----------------------------------------------------------------


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


# --- documents ---------------------------------------------------------------


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


#: Stands in for a token id when a local command acts for a user directly.
CLI_TOKEN_ID = UUID(int=0)

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


@main.command("extract")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
def extract_command(path: Path, as_json: bool) -> None:
    """Print the Markdown a file becomes, or the reason it cannot be searched (exit 2)."""
    from extract import ExtractionError
    from service.services.extraction import limits_for, sandbox_pool

    settings = get_settings()
    try:
        with sandbox_pool(settings) as sandboxes:  # a long PDF is read in parallel parts
            result = sandboxes.extract(
                path.read_bytes(), path.name, None, limits=limits_for(settings)
            )
    except ExtractionError as exc:
        fail(exc.message, code=exc.code, as_json=as_json)
    if as_json:
        emit_json(
            {
                "kind": result.kind,
                "page_count": result.page_count,
                "warnings": list(result.warnings),
                "ocr_pages": list(result.ocr_pages),
                "markdown": result.markdown,
            }
        )
        return
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(result.markdown)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@project_option
@optional_user_option
@json_option
@command_errors
def ingest(
    paths: tuple[Path, ...], project_name: str, user_name: str | None, as_json: bool
) -> None:
    """Extract files (and the supported files in folders) and store them in a project
    directly (no upload, no queue)."""
    from service.cli.files import expand_paths
    from service.services.ingest import Ingested, ingest_files

    async def work(runtime: Runtime) -> list[Ingested]:
        principal = await acting_user(runtime, user_name)
        async with connection(runtime.pool) as conn:
            target = await projects.resolve_project(conn, principal.user_id, project_name)
        return await ingest_files(runtime, target, list(expand_paths(paths)))

    results = run_with_runtime(get_settings(), work)
    entries: list[dict[str, Any]] = []
    for item in results:
        if item.error is not None:
            entries.append(
                file_entry(item.path.name, None, "error", (item.error.code, item.error.message))
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


@main.command()
@click.argument("query")
@project_option
@optional_user_option
@click.option("--top-k", type=int, default=None, help="How many passages to return.")
@json_option
@command_errors
def search(
    query: str, project_name: str, user_name: str | None, top_k: int | None, as_json: bool
) -> None:
    """Search a project; prints cited passages."""
    from retrieval.citations import near_copies_note
    from service.http.schemas import SearchResponse
    from service.services.search import search_project

    async def work(runtime: Runtime) -> Any:
        principal = await acting_user(runtime, user_name)
        return await search_project(runtime, principal, project_name, query, top_k=top_k)

    found = run_with_runtime(get_settings(), work)
    result = found.result
    if as_json:
        click.echo(msgspec.json.encode(SearchResponse.from_search(found)).decode())
        return
    if result.insufficient_evidence:
        click.echo(
            "The documents do not appear to answer this: no passage reaches the evidence floor."
            + (" The closest passages:" if result.hits else "")
        )
        click.echo()
    for number, hit in enumerate(result.hits, start=1):
        first, last = hit.pages
        pages = f"p. {first}" if first == last else f"p. {first}–{last}"
        relevance = f"relevance {hit.relevance_label}, {hit.relevance:.2f}"
        click.echo(f"[{number}] {hit.document_name} — {pages}  ({relevance})")
        click.echo(textwrap.indent(hit.text.strip(), "    "))
        if hit.near_copies:
            click.echo(f"    ({near_copies_note(hit.near_copies)})")
        click.echo()
    if not result.reranked:
        click.echo(f"(order: BM25; reranker {result.reranker} did not run)", err=True)
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)


@main.command()
@project_option
@optional_user_option
@click.option("--questions", type=int, default=40, show_default=True, help="Questions to sample.")
@click.option("--seed", type=int, default=0, show_default=True, help="Sampling seed.")
@json_option
@command_errors
def tune(
    project_name: str | None, user_name: str | None, questions: int, seed: int, as_json: bool
) -> None:
    """Find the smallest shortlist_keep that loses nothing on this project's own text."""
    from service.services.tuning import tune_project

    async def work(runtime: Runtime) -> Any:
        principal = await acting_user(runtime, user_name)
        async with connection(runtime.pool) as conn:
            target = await projects.resolve_project(conn, principal.user_id, project_name)
            return await tune_project(
                conn, runtime.search, principal, target.id, questions=questions, seed=seed
            )

    report = run_with_runtime(get_settings(), work)
    if as_json:
        click.echo(json.dumps(report.to_dict()))
        return
    click.echo(
        f"{report.questions} questions sampled from {report.documents} document(s) "
        f"({report.passages} passages), each held out of its passage; reranker {report.reranker}."
    )
    click.echo("keep   share of the rerank-everything top 3 that the shortlist holds")
    for result in report.keeps:
        click.echo(f"{result.keep:>5}  {result.agreement:6.1%}")
    if report.smallest_keep is None:
        click.echo("Every keep tried loses some top results: keep more, or rerank everything.")
    else:
        click.echo(f"Smallest keep that loses nothing: {report.smallest_keep}.")
    click.echo(
        f"The question's own page is in the top 3 for {report.source_found:.0%}; the evidence "
        f"floor flags {report.flagged:.0%} of these answerable questions."
    )


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


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path))
@project_option
@click.option(
    "--url", default=None, help="The service's base URL (default: the public URL setting)."
)
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Wait until each file is ready or failed.",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 32),
    default=None,
    help="Files sent at once (default: the client.upload_concurrency setting, 4).",
)
@json_option
@command_errors
def upload(
    paths: tuple[Path, ...],
    project_name: str,
    url: str | None,
    wait: bool,
    concurrency: int | None,
    as_json: bool,
) -> None:
    """Upload files (and the supported files in folders) to a running service through the
    grant flow, several at a time, showing each file's state as it is sent and extracted."""
    from service.cli.client import ShortlistClient
    from service.cli.files import expand_paths
    from service.cli.upload_board import UploadBoard

    settings = get_settings()
    if settings.token is None:
        raise InvalidRequest(
            "Set SHORTLIST_TOKEN to your API token (shortlist user create prints one)."
        )
    token = settings.token.get_secret_value()
    base_url = url or settings.public_url
    files = list(expand_paths(paths))
    with ShortlistClient(base_url, token) as client:
        target = client.resolve_project(project_name)
    board = UploadBoard([path.name for path in files], sys.stderr, live=sys.stderr.isatty())

    def send(index: int) -> dict[str, Any]:
        path = files[index]
        try:
            with ShortlistClient(base_url, token) as own:  # one connection pool per file
                board.sending(index, path.stat().st_size)
                document = own.upload(
                    target["id"], path, on_progress=forward_only(lambda n: board.sent(index, n))
                )
                board.extracting(index)
                if wait:
                    document = own.wait(
                        document["id"], on_update=lambda found: board.document(index, found)
                    )
        except ShortlistError as exc:
            board.failed(index, exc.message)
            return file_entry(path.name, None, "error", (exc.code, exc.message))
        board.document(index, document)
        problem = document.get("error")
        reason = (problem["code"], problem["message"]) if problem else None
        return file_entry(document["name"], document["id"], document["status"], reason)

    workers = concurrency or settings.client.upload_concurrency
    with ThreadPoolExecutor(max_workers=min(workers, max(len(files), 1))) as threads:
        entries = list(threads.map(send, range(len(files))))
    board.close()
    report_files(entries, as_json=as_json)


@main.command("import")
@click.argument("urls", nargs=-1, required=True)
@project_option
@click.option(
    "--url", "service_url", default=None, help="The service's base URL (default: the public URL)."
)
@click.option(
    "--wait/--no-wait",
    default=True,
    show_default=True,
    help="Wait until each document is ready or failed.",
)
@json_option
@command_errors
def import_command(
    urls: tuple[str, ...], project_name: str, service_url: str | None, wait: bool, as_json: bool
) -> None:
    """Import documents from web addresses into a project of a running service."""
    from service.cli.client import ShortlistClient

    settings = get_settings()
    if settings.token is None:
        raise InvalidRequest(
            "Set SHORTLIST_TOKEN to your API token (shortlist user create prints one)."
        )
    entries: list[dict[str, Any]] = []
    with ShortlistClient(
        service_url or settings.public_url, settings.token.get_secret_value()
    ) as client:
        target = client.resolve_project(project_name)
        for address in urls:
            try:
                document = client.import_url(target["id"], address)
                if wait:
                    document = client.wait(document["id"])
            except ShortlistError as exc:
                entries.append(file_entry(address, None, "error", (exc.code, exc.message)))
                continue
            problem = document.get("error")
            reason = (problem["code"], problem["message"]) if problem else None
            entries.append(file_entry(document["name"], document["id"], document["status"], reason))
    report_files(entries, as_json=as_json)


def forward_only(update: Callable[[int], object]) -> Callable[[int], None]:
    """A progress callback that never moves the bar back: bytes of a part being sent again
    (reported as a negative count first) only show once they pass the earlier high point."""
    net = shown = 0

    def report(count: int) -> None:
        nonlocal net, shown
        net += count
        if net > shown:
            update(net - shown)
            shown = net

    return report


@main.command()
@click.option("--name", default="shortlist-worker", show_default=True, help="Worker name in logs.")
def worker(name: str) -> None:
    """Run a standalone extraction worker (scale by running more of them)."""
    settings = get_settings()
    logging.getLogger("service").setLevel(settings.server.log_level.upper())
    logging.getLogger("procrastinate").setLevel(logging.INFO)

    async def work(runtime: Runtime) -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, task.cancel)
        click.echo(f"Extraction worker {name!r} is running; stop it with Ctrl+C.")
        with contextlib.suppress(asyncio.CancelledError):
            await runtime.jobs.run_worker_forever(runtime, name=name)

    run_with_runtime(settings, work)
