"""``shortlist search`` and ``shortlist tune``: a project's passages for a query, and the
shortlist size that loses nothing on the project's own text."""

from __future__ import annotations

import json
import textwrap
from typing import Any

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
)
from service.runtime import Runtime
from service.services import projects
from service.settings import get_settings
from service.storage.db import connection


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
    from service.services.search import search_project
    from service.shapes import SearchResponse

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
