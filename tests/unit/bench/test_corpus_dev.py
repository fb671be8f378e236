"""The development set (``bench/data/corpus_dev.jsonl``) is well formed and its folds stratified."""

from __future__ import annotations

import json
from collections import Counter

import pytest

from bench.corpus_dev import DEV_SET, DOCUMENTS, KINDS, assign_folds, load_questions
from tests.support.paths import CORPUS_DIR


def test_every_question_parses_with_a_kind_a_fold_and_a_searched_document() -> None:
    questions = load_questions()
    assert {q.kind for q in questions} <= set(KINDS)
    for question in questions:
        assert question.document is None or question.document in DOCUMENTS, question
        assert (question.kind in ("unanswerable", "near-miss")) == (question.document is None)
        if question.kind == "near-miss":
            assert question.near in DOCUMENTS, question
    assert len({q.question for q in questions}) == len(questions), "a question is repeated"


def test_pages_exist_in_their_documents() -> None:
    manifest = CORPUS_DIR / "manifest.json"
    if not manifest.exists():
        pytest.skip("the shared corpus is not beside the repository")
    pages = {entry["path"]: entry["pages"] for entry in json.loads(manifest.read_text())}
    for question in load_questions():
        if question.document is not None:
            assert max(question.pages) <= pages[question.document], question


def test_folds_are_stratified_by_kind_and_pretuned_questions_stay_in_tuning() -> None:
    rows = [json.loads(line) for line in DEV_SET.read_text(encoding="utf-8").splitlines()]
    assert all(row["fold"] == "tuning" for row in rows if row.get("pretuned"))
    counts = Counter((row["kind"], row["fold"]) for row in rows if not row.get("pretuned"))
    for kind in {row["kind"] for row in rows if not row.get("pretuned")}:
        assert abs(counts[kind, "tuning"] - counts[kind, "test"]) <= 1, kind


def test_a_new_question_goes_to_the_fold_its_kind_lacks_and_never_moves_another() -> None:
    rows = [
        {"question": "a", "kind": "list", "fold": "test"},
        {"question": "b", "kind": "list", "fold": "test", "pretuned": True},
        {"question": "c", "kind": "list"},
        {"question": "d", "kind": "table"},
        {"question": "e", "kind": "table"},
    ]
    placed = assign_folds(rows)
    assert [row["fold"] for row in placed[:3]] == ["test", "test", "tuning"]
    assert {placed[3]["fold"], placed[4]["fold"]} == {"tuning", "test"}
    assert assign_folds([*placed, {"question": "f", "kind": "list"}])[:5] == placed
