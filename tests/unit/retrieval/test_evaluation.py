"""Scoring labelled questions: parsing a file's lines, hit@k and the verdict's flags."""

from __future__ import annotations

import math

import pytest

from retrieval.errors import InvalidLabel
from retrieval.evaluation import (
    LabelledQuestion,
    answering_rank,
    outcome,
    parse_file,
    parse_line,
    parse_lines,
    score,
    score_by_kind,
)
from retrieval.index import ChunkIndex
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.types import Hit, SearchResult, SourceDocument


def hit(document: str, first: int, last: int) -> Hit:
    return Hit(f"{document}:{first}", document, document, (first, last), "", "text", 1.0, 1.0)


def result(hits: list[Hit], *, flagged: bool = False) -> SearchResult:
    return SearchResult(hits, [], "none", False, (), len(hits), 0, True, False, flagged)


def test_a_line_names_a_document_and_its_pages_or_says_it_is_unanswerable() -> None:
    lines = [
        '{"question": " How many tracks? ", "document": "linn.pdf", "pages": [3, 1, 3]}',
        "",
        '{"question": "Warranty?", "answerable": false, "kind": "near-miss", "note": "ignored"}',
        '{"question": "Boiling points", "answerable": false, "document": null, "pages": []}',
    ]
    parsed = parse_lines(lines)
    assert parsed == [
        LabelledQuestion("How many tracks?", "linn.pdf", (1, 3), "", 1),
        LabelledQuestion("Warranty?", None, (), "near-miss", 3),
        LabelledQuestion("Boiling points", None, (), "", 4),
    ]
    assert [q.answerable for q in parsed] == [True, False, False]


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("{not json", "not JSON"),
        ('["a list"]', "expected a JSON object"),
        ('{"document": "a.pdf", "pages": [1]}', '"question" must be a non-empty string'),
        ('{"question": "q", "pages": [1]}', '"document" must name the answering document'),
        ('{"question": "q", "document": "a.pdf"}', '"pages" must be a non-empty list'),
        ('{"question": "q", "document": "a.pdf", "pages": []}', '"pages" must be a non-empty'),
        ('{"question": "q", "document": "a.pdf", "pages": [0]}', '"pages" must be a non-empty'),
        ('{"question": "q", "document": "a.pdf", "pages": ["2"]}', '"pages" must be a non-empty'),
        ('{"question": "q", "document": "a.pdf", "pages": [true]}', '"pages" must be a non-empty'),
        ('{"question": "q", "answerable": "no"}', '"answerable" must be true or false'),
        ('{"question": "q", "answerable": false, "document": "a.pdf"}', "names no"),
        ('{"question": "q", "document": "a.pdf", "pages": [1], "kind": 3}', '"kind" must be'),
    ],
)
def test_a_bad_line_is_refused_naming_its_number(line: str, reason: str) -> None:
    with pytest.raises(InvalidLabel) as refused:
        parse_lines(['{"question": "fine", "answerable": false}', line])
    assert refused.value.line == 2
    assert reason in refused.value.reason
    assert str(refused.value).startswith("line 2: ")


def test_a_file_is_utf_8_and_a_line_that_is_not_is_named() -> None:
    good = '\ufeff{"question": "Quanti elettori?", "document": "é.pdf", "pages": [1]}\n'.encode()
    assert parse_file(good) == [LabelledQuestion("Quanti elettori?", "é.pdf", (1,), "", 1)]
    with pytest.raises(InvalidLabel) as refused:
        parse_file(b'{"question": "a", "answerable": false}\n\n{"question": "\xff"}\n')
    assert (refused.value.line, refused.value.reason) == (3, "not UTF-8 text")


def test_a_blank_line_is_no_question() -> None:
    assert parse_line("   \n", 7) is None


def test_the_rank_is_the_first_hit_on_the_right_document_touching_a_right_page() -> None:
    question = LabelledQuestion("q", "a.pdf", (4, 9))
    hits = [hit("b.pdf", 4, 4), hit("a.pdf", 1, 3), hit("a.pdf", 3, 5), hit("a.pdf", 9, 9)]
    assert answering_rank(question, hits) == 3
    assert answering_rank(question, hits[:2]) is None
    assert answering_rank(LabelledQuestion("q", None), hits) is None


def test_scores_count_hits_at_each_cutoff_and_the_verdict_both_ways() -> None:
    right = hit("a.pdf", 2, 2)
    wrong = hit("b.pdf", 2, 2)
    outcomes = [
        outcome(LabelledQuestion("first", "a.pdf", (2,), "number"), result([right])),
        outcome(LabelledQuestion("third", "a.pdf", (2,), "number"), result([wrong, wrong, right])),
        outcome(
            LabelledQuestion("tenth", "a.pdf", (2,), "table"),
            result([wrong] * 9 + [right], flagged=True),
        ),
        outcome(LabelledQuestion("missed", "a.pdf", (2,), "table"), result([wrong] * 10)),
        outcome(LabelledQuestion("absent", None, (), "near-miss"), result([wrong], flagged=True)),
        outcome(LabelledQuestion("absent 2", None, (), "near-miss"), result([wrong])),
    ]
    scores = score(outcomes)
    assert (scores.answerable, scores.unanswerable) == (4, 2)
    assert scores.hit_at == {1: 0.25, 3: 0.5, 10: 0.75}
    assert scores.false_flags == 0.25
    assert scores.unanswerable_flagged == 0.5
    by_kind = score_by_kind(outcomes)
    assert list(by_kind) == ["number", "table", "near-miss"]
    assert by_kind["number"].hit_at[3] == 1.0
    assert by_kind["table"].hit_at == {1: 0.0, 3: 0.0, 10: 0.5}
    assert math.isnan(by_kind["near-miss"].hit_at[1])
    assert by_kind["near-miss"].to_dict() == {
        "answerable": 0,
        "unanswerable": 2,
        "hit_at_1": None,
        "hit_at_3": None,
        "hit_at_10": None,
        "false_flags": None,
        "unanswerable_flagged": 0.5,
    }


def test_a_real_search_is_scored_on_the_page_that_answers() -> None:
    markdown = (
        "<!-- page 1 -->\n# Orchard survey\n\nThe rangers counted apple trees in the north.\n\n"
        "<!-- page 2 -->\n# Results\n\nThe north orchard holds 412 pear trees and 60 plums.\n"
    )
    documents = [SourceDocument("orchard", "orchard.pdf", "h1", markdown)]
    index = ChunkIndex(chunk_size=12)
    index.add(documents)
    refs = [doc.ref for doc in documents]
    question = LabelledQuestion("how many pear trees", "orchard", (2,))
    found = outcome(question, search(index, question.question, refs, reranker=NoReranker()))
    assert found.rank == 1
    assert found.hit(1)
