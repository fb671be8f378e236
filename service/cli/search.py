"""``shortlist search`` and ``shortlist tune``: a project's passages for a query, and the
shortlist size that loses nothing on the project's own text."""

from __future__ import annotations

import json
import textwrap
from typing import Any, get_args

import click
import msgspec

from service.cli.plumbing import (
    acting_user,
    command_errors,
    json_option,
    main,
    optional_user_option,
    project_option,
    run_with_runtime,
    service_client,
)
from service.runtime import Runtime
from service.services import projects
from service.services.mentions import Match
from service.settings import get_settings
from service.storage.db import connection

url_option = click.option(
    "--url", default=None, help="The service's base URL (default: the public URL setting)."
)


@main.command()
@click.argument("query")
@project_option
@optional_user_option
@url_option
@click.option("--top-k", type=int, default=None, help="How many passages to return.")
@click.option(
    "--open",
    "open_number",
    type=int,
    default=None,
    metavar="N",
    help="Show result N in your viewer: its page with the passage marked (PDFs, images), "
    "else the original at its page ($BROWSER chooses the viewer).",
)
@json_option
@command_errors
def search(
    query: str,
    project_name: str | None,
    user_name: str | None,
    url: str | None,
    top_k: int | None,
    open_number: int | None,
    as_json: bool,
) -> None:
    """Search a project; prints cited passages. Through the running service when
    SHORTLIST_TOKEN is set (and no --user); otherwise in this process, scoring every
    candidate before answering."""
    from service.cli import open_result
    from service.services.search import search_project
    from service.shapes import SearchResponse

    settings = get_settings()
    client = service_client(settings, user_name, url)
    if client is not None:
        with client:
            target = client.resolve_project(project_name)
            raw = client.search(str(target["id"]), query, top_k=top_k)
            answer = msgspec.json.decode(raw, type=SearchResponse)
            if open_number is not None:
                open_result.open_remote(client, open_result.chosen(answer, open_number))
    else:

        async def work(runtime: Runtime) -> Any:
            principal = await acting_user(runtime, user_name)
            found = SearchResponse.from_search(
                await search_project(runtime, principal, project_name, query, top_k=top_k)
            )
            if open_number is not None:
                hit = open_result.chosen(found, open_number)
                await open_result.open_local(runtime, principal, hit)
            return found

        answer = run_with_runtime(settings, work)
        raw = msgspec.json.encode(answer)
        click.echo(LOCALLY, err=True)
    if as_json:
        click.echo(raw.decode())
        return
    _print_search(answer)


LOCALLY = (
    "(searched locally, in this process: no service configured; set SHORTLIST_TOKEN to "
    "search through the running one)"
)


def _print_search(answer: Any) -> None:
    """The passages as numbered citations; how they were ordered and any warning on stderr."""
    from retrieval.citations import near_copies_note
    from retrieval.types import NearCopy

    if answer.insufficient_evidence:
        click.echo(
            "The documents do not appear to answer this: no passage reaches the evidence floor."
            + (" The closest passages:" if answer.results else "")
        )
        click.echo()
    for number, hit in enumerate(answer.results, start=1):
        first, last = hit.pages
        pages = f"p. {first}" if first == last else f"p. {first}–{last}"
        relevance = f"relevance {hit.relevance_label}, {hit.relevance:.2f}"
        click.echo(f"[{number}] {hit.document.name} — {pages}  ({relevance})")
        click.echo(textwrap.indent(hit.text.strip(), "    "))
        copies = [
            NearCopy(c.chunk_id, str(c.document.id), c.document.name, tuple(c.pages), c.similarity)
            for c in hit.near_copies
        ]
        if copies:
            click.echo(f"    ({near_copies_note(copies)})")
        click.echo()
    if answer.ranking != "reranked":
        click.echo(f"(order: {answer.ranking_note})", err=True)
    for warning in answer.warnings:
        click.echo(f"warning: {warning}", err=True)


@main.command()
@click.argument("terms", nargs=-1, required=True)
@click.option(
    "--match",
    type=click.Choice(get_args(Match)),
    default="all",
    show_default=True,
    help="Documents containing all the terms, or any of them.",
)
@project_option
@optional_user_option
@url_option
@json_option
@command_errors
def mentions(
    terms: tuple[str, ...],
    match: Match,
    project_name: str | None,
    user_name: str | None,
    url: str | None,
    as_json: bool,
) -> None:
    """Every document of a project that contains the words or phrases, with counts and pages
    (exhaustive, not ranked). Through the running service when SHORTLIST_TOKEN is set."""
    from service.services.mentions import find_mentions
    from service.shapes import MentionsResponse

    settings = get_settings()
    client = service_client(settings, user_name, url)
    if client is not None:
        with client:
            target = client.resolve_project(project_name)
            raw = client.mentions(str(target["id"]), list(terms), match)
        answer = msgspec.json.decode(raw, type=MentionsResponse)
    else:

        async def work(runtime: Runtime) -> Any:
            principal = await acting_user(runtime, user_name)
            return await find_mentions(runtime, principal, project_name, list(terms), match)

        answer = MentionsResponse.from_result(run_with_runtime(settings, work))
        raw = msgspec.json.encode(answer)
        click.echo(LOCALLY.replace("searched", "looked"), err=True)
    if as_json:
        click.echo(raw.decode())
        return
    if not answer.documents:
        click.echo(f"No document mentions {' and '.join(repr(t) for t in answer.terms)}.")
    for found in answer.documents:
        counts = "; ".join(
            f"{term.term!r} ×{term.occurrences}"
            + (f" (p. {', '.join(map(str, term.pages))})" if term.pages else "")
            for term in found.terms
        )
        click.echo(f"{found.document.name}: {counts}")
    if answer.documents_not_searchable:
        click.echo(
            f"({answer.documents_not_searchable} document(s) not searched: still being "
            "extracted or not searchable)",
            err=True,
        )


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
