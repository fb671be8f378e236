"""``shortlist upload`` and ``shortlist import``: send files, or web addresses, to a running
service over REST."""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import IO, Any

import click

from service.cli.plumbing import (
    command_errors,
    file_entry,
    json_option,
    main,
    project_option,
    report_files,
)
from service.errors import FileUnreadable, InvalidRequest, ShortlistError
from service.services.folders import NamedFile
from service.settings import get_settings


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
    """Upload files (and the supported files in folders, named by their path in the folder;
    `.shortlistignore`, dot-files, lock files and links skipped) to a running service through the
    grant flow, several at a time, showing each file's state as it is sent and extracted."""
    from service.cli.client import ShortlistClient
    from service.services.folders import expand_paths

    settings = get_settings()
    if settings.token is None:
        raise InvalidRequest(
            "Set SHORTLIST_TOKEN to your API token (shortlist user create prints one)."
        )
    token = settings.token.get_secret_value()
    base_url = url or settings.public_url
    files = expand_paths(paths)
    with ShortlistClient(base_url, token) as client:
        target = client.resolve_project(project_name)
    entries = send_files(
        base_url,
        token,
        str(target["id"]),
        files,
        wait=wait,
        concurrency=concurrency or settings.client.upload_concurrency,
    )
    report_files(entries, as_json=as_json)


def send_files(
    base_url: str,
    token: str,
    project_id: str,
    files: list[NamedFile],
    *,
    wait: bool,
    concurrency: int,
    stream: IO[str] | None = None,
) -> list[dict[str, Any]]:
    """Upload ``files`` under their names, ``concurrency`` at a time, each on the board (on
    ``stream``, stderr by default); one entry per file, in order. A file that fails — refused,
    unreadable, lost on the way — is that file's entry and never stops another."""
    from service.cli.client import ShortlistClient
    from service.cli.upload_board import UploadBoard

    out = stream or sys.stderr
    board = UploadBoard([file.name for file in files], out, live=out.isatty())

    def send(index: int) -> dict[str, Any]:
        path, name = files[index]
        try:
            with ShortlistClient(base_url, token) as own:  # one connection pool per file
                try:
                    board.sending(index, path.stat().st_size)
                    document = own.upload(
                        project_id,
                        path,
                        name=name,
                        on_progress=forward_only(lambda n: board.sent(index, n)),
                    )
                except OSError as exc:
                    raise FileUnreadable(path, exc) from exc
                board.extracting(index)
                if wait:
                    document = own.wait(
                        document["id"], on_update=lambda found: board.document(index, found)
                    )
        except ShortlistError as exc:
            board.failed(index, exc.message)
            return file_entry(name, None, "error", (exc.code, exc.message))
        board.document(index, document)
        problem = document.get("error")
        reason = (problem["code"], problem["message"]) if problem else None
        return file_entry(document["name"], document["id"], document["status"], reason)

    with ThreadPoolExecutor(max_workers=min(concurrency, max(len(files), 1))) as threads:
        entries = list(threads.map(send, range(len(files))))
    board.close()
    return entries


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
