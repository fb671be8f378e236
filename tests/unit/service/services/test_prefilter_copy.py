"""The prefilter's COPY text: one line per (term, passage), hostile terms escaped, huge ones left
out (a btree entry has a size limit); a document's vocabulary, the terms of those lines; its
chunks' layout as stored and read back."""

from __future__ import annotations

import json

import pytest

from retrieval.index import PassageTerms
from retrieval.types import PassageBounds
from service.services.prefilter import (
    MAX_TERM_CHARS,
    layout_json,
    postings_copy_text,
    stored_layout,
    vocabulary,
)


def test_each_distinct_term_of_a_passage_is_one_line_with_its_frequency_and_the_length() -> None:
    text = postings_copy_text(
        [("p", "d", PassageTerms("english", [["cat", "hat", "cat"], ["dog"]], "english"))]
    )
    assert text.splitlines() == ["p\tcat\td\t0\t2\t3", "p\tdog\td\t1\t1\t1", "p\that\td\t0\t1\t3"]


def test_a_term_holding_copy_syntax_is_escaped_and_an_oversized_one_is_left_out() -> None:
    hostile = "a\\b\tc\nd"
    huge = "x" * (MAX_TERM_CHARS + 1)
    text = postings_copy_text([("p", "d", PassageTerms("english", [[hostile, huge]], "english"))])
    assert text == "p\ta\\\\b\\tc\\nd\td\t0\t1\t2\n"


def test_several_documents_lines_come_in_the_primary_keys_order() -> None:
    """Project, term, document, passage (numerically: passage 10 after 9), whatever order the
    documents are given in: each index then takes a batch's rows a term at a time."""
    many = [["cat"]] * 11
    text = postings_copy_text(
        [
            ("q", "d2", PassageTerms("english", [["ant"]], "english")),
            ("p", "d2", PassageTerms("english", [["cat", "bee"], ["bee"]], "english")),
            ("p", "d1", PassageTerms("english", many, "english")),
        ]
    )
    keys = [tuple(line.split("\t")[:4]) for line in text.splitlines()]
    assert keys == sorted(keys, key=lambda key: (key[0], key[1], key[2], int(key[3])))
    assert keys[:3] == [("p", "bee", "d2", "0"), ("p", "bee", "d2", "1"), ("p", "cat", "d1", "0")]
    assert keys[-3:] == [("p", "cat", "d1", "10"), ("p", "cat", "d2", "0"), ("q", "ant", "d2", "0")]
    assert len(keys) == 15


def test_the_vocabulary_is_the_distinct_terms_of_the_lines() -> None:
    huge = "x" * (MAX_TERM_CHARS + 1)
    terms = PassageTerms("english", [["cat", "hat", "cat"], ["dog", "cat", huge]], "english")
    lines = postings_copy_text([("p", "d", terms)]).splitlines()
    assert sorted(vocabulary(terms)) == sorted({line.split("\t")[1] for line in lines})
    assert sorted(vocabulary(terms)) == ["cat", "dog", "hat"]


def test_a_term_holding_a_space_is_refused_since_it_would_be_sent_as_two() -> None:
    with pytest.raises(ValueError, match="space"):
        vocabulary(PassageTerms("english", [["two words"]], "english"))


def test_a_layout_reads_back_as_it_was_stored_and_anything_else_reads_as_none() -> None:
    """``lexical_documents.passage_layout`` (migration 026) holds one array per passage; what
    is read back from it is the layout written, and a value of another shape is no layout
    (the cache then chunks the document), never an error."""
    layout = (
        PassageBounds(0, 40, 1, 1, "Intro", ""),
        PassageBounds(41, 300, 1, 2, 'Intro > Table "2"', "| a | b |\n|---|---|\n"),
        PassageBounds(302, 400, 2, 2, "量子计算", ""),
    )
    stored = layout_json(layout)
    assert stored is not None and stored_layout(json.loads(stored)) == layout
    assert stored_layout([]) == () and layout_json(()) == "[]"
    assert layout_json(None) is None  # not known: none stored, the backfill fills it in
    for other in (
        None,
        {"start": 0},
        [[0, 40, 1, 1, "Intro"]],  # a field short
        [[0, 40, 1, 1, "Intro", "", "more"]],
        [[0, 40.5, 1, 1, "Intro", ""]],
        [[0, True, 1, 1, "Intro", ""]],
        [[0, 40, 1, 1, None, ""]],
        ["0, 40, 1, 1"],
    ):
        assert stored_layout(other) is None, other
