"""``shortlist eval``: how a project's search does on the user's own labelled questions.

Each question names its answering document by name (or id) within the project
and the pages any of which answers it, or says nothing answers it
(:mod:`retrieval.evaluation` reads the file). Every question is searched through
:func:`~service.services.search.search_project`, the one search every door
calls, with the rules that apply to it (the search budget is waited out, not
failed on), for :data:`~retrieval.evaluation.TOP_K` passages; the answers are
scored with hit@1/3/10 and the verdict's flags.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple
from uuid import UUID

import anyio

from retrieval import SearchResult
from retrieval.evaluation import (
    TOP_K,
    LabelledQuestion,
    Outcome,
    Scores,
    outcome,
    score,
    score_by_kind,
)
from retrieval.rerankers.none import NoReranker
from service.errors import DocumentNotFound, DocumentNotReady, InvalidRequest, RateLimited
from service.records import Principal, Project
from service.services import documents, projects
from service.services.search import ProjectSearch, search_project
from service.storage.db import connection

if TYPE_CHECKING:
    from service.runtime import Runtime

MAX_QUESTIONS = 2000
"""Most questions one evaluation may hold (each is a search)."""


class EvaluationReport(NamedTuple):
    """The scores of one evaluation, overall and per kind, and each question's outcome."""

    project: Project
    scores: Scores
    by_kind: dict[str, Scores]
    """Per ``kind`` label, when the file gives kinds (empty otherwise)."""
    outcomes: list[Outcome]
    partly_ranked: int
    """Searches whose reranker did not score every candidate (a cold cache, a timeout)."""
    reranker: str

    def to_dict(self) -> dict[str, object]:
        return {
            "project": {"id": str(self.project.id), "name": self.project.name},
            "reranker": self.reranker,
            **self.scores.to_dict(),
            "partly_ranked": self.partly_ranked,
            "kinds": {kind: scores.to_dict() for kind, scores in self.by_kind.items()},
            "questions": [
                {
                    "line": item.question.line,
                    "question": item.question.question,
                    "answerable": item.question.answerable,
                    "rank": item.rank,
                    "flagged": item.flagged,
                }
                for item in self.outcomes
            ],
        }


async def evaluate_project(
    runtime: Runtime,
    principal: Principal,
    project: UUID | str | None,
    questions: Sequence[LabelledQuestion],
) -> EvaluationReport:
    """Search ``project`` for each labelled question and score the answers.

    Each answering document is looked up in the project first (a name that is not a
    searchable document of the project is refused, naming the question's line),
    so nothing is searched for a file with a wrong label.
    """
    if not questions:
        raise InvalidRequest("The file holds no labelled questions.")
    if len(questions) > MAX_QUESTIONS:
        raise InvalidRequest(
            f"An evaluation may hold at most {MAX_QUESTIONS} questions; {len(questions)} given."
        )
    async with connection(runtime.pool) as conn:
        target = await projects.resolve_project(conn, principal.user_id, project)
        ids: dict[str, str] = {}
        for question in questions:
            if question.document is None or question.document in ids:
                continue
            try:
                found = await documents.find_document(conn, principal, question.document, target)
                if found.project_id != target.id:
                    raise DocumentNotFound(
                        f"{found.name!r} is not in project {target.name!r}.",
                        document=question.document,
                    )
                documents.require_searchable(found)
            except (DocumentNotFound, DocumentNotReady) as error:
                raise type(error)(
                    f"line {question.line}: {error.message}", **error.details
                ) from None
            ids[question.document] = str(found.id)
    outcomes = []
    partly = 0
    reranker = ""
    for question in questions:
        found_search = await _search(runtime, principal, target, question.question)
        result = found_search.result
        reranker = result.reranker
        partly += _partly_ranked(result)
        labelled = question._replace(document=ids[question.document] if question.document else None)
        outcomes.append(outcome(labelled, result)._replace(question=question))
    kinds = score_by_kind(outcomes) if any(q.kind for q in questions) else {}
    return EvaluationReport(target, score(outcomes), kinds, outcomes, partly, reranker)


def _partly_ranked(result: SearchResult) -> bool:
    """A reranker left candidates unscored, or did not run (BM25 order): not a ranking to
    score a reranker by. BM25 alone (reranker ``none``) is complete as it is."""
    if result.unscored > 0:
        return True
    return not result.reranked and result.reranker != NoReranker.name and result.candidates > 0


async def _search(
    runtime: Runtime, principal: Principal, target: Project, query: str
) -> ProjectSearch:
    """:func:`search_project`, waiting out the token's search budget instead of failing."""
    while True:
        try:
            return await search_project(runtime, principal, target.id, query, top_k=TOP_K)
        except RateLimited as limited:
            await anyio.sleep(limited.retry_after)
