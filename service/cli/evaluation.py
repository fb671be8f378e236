"""``shortlist eval``: hit@1/3/10 and the verdict's false flags for the user's own labelled
questions (the file format: :mod:`retrieval.evaluation`)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from service.cli.plumbing import (
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
from service.settings import get_settings

if TYPE_CHECKING:
    from retrieval.evaluation import Scores


@main.command("eval")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@project_option
@optional_user_option
@json_option
@command_errors
def evaluate(file: Path, project_name: str | None, user_name: str | None, as_json: bool) -> None:
    """Score search on labelled questions: one JSON object a line, with "question", the
    answering "document" (its name in the project) and its "pages", or "answerable": false."""
    from retrieval.evaluation import CUTOFFS, parse_file
    from service.services.evaluation import evaluate_project

    try:
        data = file.read_bytes()
    except OSError as error:
        raise InvalidRequest(f"Cannot read {file}: {error.strerror or error}.") from None
    questions = parse_file(data)

    async def work(runtime: Runtime) -> Any:
        principal = await acting_user(runtime, user_name)
        return await evaluate_project(runtime, principal, project_name, questions)

    report = run_with_runtime(get_settings(), work)
    if as_json:
        emit_json(report.to_dict())
        return
    scores = report.scores
    click.echo(
        f"{len(report.outcomes)} labelled questions ({scores.answerable} answerable, "
        f"{scores.unanswerable} unanswerable) searched in project {report.project.name!r}; "
        f"reranker {report.reranker}."
    )
    if scores.answerable:
        hits = ", ".join(f"hit@{k} {_count(scores.hit_at[k], scores.answerable)}" for k in CUTOFFS)
        click.echo(f"The right page: {hits}.")
        click.echo(
            "The evidence floor flags "
            f"{_count(scores.false_flags, scores.answerable)} of the answerable questions"
            + (
                f" and {_count(scores.unanswerable_flagged, scores.unanswerable)} of the "
                "unanswerable ones."
                if scores.unanswerable
                else "."
            )
        )
    else:
        click.echo(
            "The evidence floor flags "
            f"{_count(scores.unanswerable_flagged, scores.unanswerable)} of the unanswerable ones."
        )
    if report.by_kind:
        click.echo()
        click.echo(
            "kind                  n  " + "  ".join(f"hit@{k:<2}" for k in CUTOFFS) + " flagged"
        )
        for kind, kind_scores in report.by_kind.items():
            click.echo(_kind_row(kind or "(none)", kind_scores, CUTOFFS))
    missed = [o for o in report.outcomes if o.question.answerable and not o.hit(max(CUTOFFS))]
    wrongly = [o for o in report.outcomes if o.question.answerable and o.flagged]
    unflagged = [o for o in report.outcomes if not o.question.answerable and not o.flagged]
    for title, items in (
        (f"Not in the top {max(CUTOFFS)}", missed),
        ("Flagged though answerable", wrongly),
        ("Not flagged though unanswerable", unflagged),
    ):
        if items:
            click.echo()
            click.echo(f"{title}:")
            for item in items:
                click.echo(f"  line {item.question.line}: {item.question.question}")
    if report.partly_ranked:
        click.echo(
            f"warning: {report.partly_ranked} of {len(report.outcomes)} searches were partly "
            "ranked (the reranker had not scored every candidate); a warm service may do better.",
            err=True,
        )


def _count(share: float, total: int) -> str:
    """``0.75 (3/4)``."""
    return f"{share:.2f} ({round(share * total)}/{total})"


def _kind_row(kind: str, scores: Scores, cutoffs: tuple[int, ...]) -> str:
    def cell(value: float) -> str:
        return "   -  " if math.isnan(value) else f"{value:6.2f}"

    if scores.answerable:
        n, flagged = scores.answerable, scores.false_flags
        hits = "  ".join(cell(scores.hit_at[k]) for k in cutoffs)
    else:
        n, flagged = scores.unanswerable, scores.unanswerable_flagged
        hits = "  ".join(cell(math.nan) for _ in cutoffs)
    return f"{kind[:20]:<20} {n:>3}  {hits}  {cell(flagged)}"
