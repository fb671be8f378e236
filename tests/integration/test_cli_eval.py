"""``shortlist eval`` against a real database: the user's labelled questions, scored."""

from __future__ import annotations

import json
from pathlib import Path

import psycopg
import pytest

from tests.integration.test_cli import shortlist
from tests.support.abstracts import add_ready_markdown

ORCHARD = (
    "<!-- page 1 -->\n# Orchard survey\n\nThe rangers walked every row of the estate in spring.\n\n"
    "<!-- page 2 -->\n# Results\n\nThe north orchard holds 412 pear trees and 60 plum trees.\n\n"
    "<!-- page 3 -->\n# Water\n\nThe irrigation pond stores three million litres.\n"
)
BAKERY = (
    "<!-- page 1 -->\n# Loaves\n\nSourdough loaves bake at 240 degrees for 45 minutes.\n\n"
    "<!-- page 2 -->\n# Hours\n\nThe shop opens at seven on weekdays.\n"
)


def labelled(tmp_path: Path, *rows: dict[str, object] | str) -> Path:
    path = tmp_path / "questions.jsonl"
    lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_eval_scores_the_users_labelled_questions_and_names_bad_lines(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SHORTLIST_SEARCH__RERANKER", "none")  # the CLI's environment
    assert shortlist(db_url, tmp_path, "user", "create", "alice").returncode == 0
    with psycopg.connect(db_url, autocommit=True) as conn:
        (project_id,) = conn.execute("SELECT id FROM projects").fetchone() or (None,)
    add_ready_markdown(db_url, project_id, [("orchard.md", ORCHARD), ("bakery.md", BAKERY)])
    questions = labelled(
        tmp_path,
        {"question": "how many pear trees in the north orchard", "document": "orchard.md",
         "pages": [2], "kind": "number"},
        {"question": "sourdough loaves bake at how many degrees", "document": "bakery.md",
         "pages": [1, 2], "kind": "number"},
        "",
        {"question": "when does the shop open", "document": "orchard.md", "pages": [3]},
        {"question": "How do I change a bicycle tyre?", "answerable": False,
         "kind": "unanswerable"},
    )  # fmt: skip

    scored = shortlist(db_url, tmp_path, "eval", str(questions), "--json")

    assert scored.returncode == 0, scored.stderr
    report = json.loads(scored.stdout)
    assert report["project"]["name"] == "default"
    assert (report["answerable"], report["unanswerable"]) == (3, 1)
    assert report["hit_at_1"] == report["hit_at_3"] == report["hit_at_10"] == 0.6667
    assert [(q["line"], q["rank"]) for q in report["questions"]] == [
        (1, 1), (2, 1), (4, None), (5, None),
    ]  # fmt: skip
    flagged = [q["flagged"] for q in report["questions"]]
    assert report["false_flags"] == round(sum(flagged[:3]) / 3, 4)
    assert report["unanswerable_flagged"] == 1.0 and flagged[3] is True
    assert flagged[0] is False
    assert report["kinds"]["number"]["hit_at_1"] == 1.0
    assert report["kinds"][""]["hit_at_10"] == 0.0
    assert report["kinds"]["unanswerable"]["unanswerable_flagged"] == 1.0

    text = shortlist(db_url, tmp_path, "eval", str(questions))
    assert text.returncode == 0, text.stderr
    assert "4 labelled questions (3 answerable, 1 unanswerable)" in text.stdout
    assert "hit@1 0.67 (2/3), hit@3 0.67 (2/3), hit@10 0.67 (2/3)" in text.stdout
    assert "Not in the top 10:\n  line 4: when does the shop open" in text.stdout
    assert "partly ranked" not in text.stderr  # BM25 alone is all there is to rank with

    bad = labelled(
        tmp_path,
        {"question": "fine", "answerable": False},
        {"question": "pages missing", "document": "orchard.md"},
    )
    refused = shortlist(db_url, tmp_path, "eval", str(bad), "--json")
    assert refused.returncode == 2
    error = json.loads(refused.stdout)["error"]
    assert error["code"] == "invalid_label"
    assert error["message"].startswith("line 2: ")

    unknown = labelled(tmp_path, {"question": "q", "document": "orchard.pdf", "pages": [1]})
    missing = shortlist(db_url, tmp_path, "eval", str(unknown), "--json")
    assert missing.returncode == 2
    error = json.loads(missing.stdout)["error"]
    assert error["code"] == "document_not_found"
    assert error["message"].startswith("line 1: Project 'default' has no document named")

    gone = shortlist(db_url, tmp_path, "eval", str(tmp_path / "nope.jsonl"))
    assert gone.returncode == 2
    assert gone.stderr.startswith("Error: Cannot read ")
