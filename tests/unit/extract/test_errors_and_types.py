from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import extract
import extract.errors
from extract.errors import (
    CorruptDocumentError,
    DocumentTooLargeError,
    EmptyDocumentError,
    EncryptedDocumentError,
    ExtractionError,
    ExtractionTimeout,
    ScannedPdfError,
    UnsupportedFormatError,
    error_from_payload,
)
from extract.markdown import assemble_pages, markdown_table
from extract.types import Extraction

ERRORS: list[ExtractionError] = [
    EmptyDocumentError(),
    EncryptedDocumentError("needs a password"),
    CorruptDocumentError(),
    UnsupportedFormatError("nope"),
    ScannedPdfError(40, 41),
    ExtractionTimeout(),
    DocumentTooLargeError("too big"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda error: error.code)
def test_errors_survive_a_pickle_round_trip(error: ExtractionError) -> None:
    copy = pickle.loads(pickle.dumps(error))

    assert type(copy) is type(error)
    assert (copy.code, copy.message, copy.details()) == (error.code, error.message, error.details())


@pytest.mark.parametrize("error", ERRORS, ids=lambda error: error.code)
def test_errors_survive_the_json_payload_round_trip(error: ExtractionError) -> None:
    copy = error_from_payload(error.to_payload())

    assert type(copy) is type(error)
    assert copy.to_payload() == error.to_payload()


def test_scanned_pdf_error_message_names_the_counts() -> None:
    error = ScannedPdfError(40, 41)

    assert error.code == "scanned_pdf"
    assert "40 of 41 pages have no text layer" in error.message
    assert str(error) == error.message


def test_default_message_is_the_class_docstring() -> None:
    assert EmptyDocumentError().message == EmptyDocumentError.__doc__


def test_page_of_maps_offsets_to_pages() -> None:
    extraction = assemble_pages(["first", "second", "third"], "pptx")

    starts = extraction.page_offsets
    assert [extraction.page_of(offset) for offset in starts] == [1, 2, 3]
    assert extraction.page_of(starts[1] - 1) == 1
    assert extraction.page_of(len(extraction.markdown) + 10) == 3
    assert extraction.page_of(-5) == 1


def test_extraction_rejects_offsets_that_do_not_match_the_page_count() -> None:
    with pytest.raises(ValueError, match="page_offsets"):
        Extraction(markdown="x", page_count=2, page_offsets=(0,), kind="text")


def test_markdown_table_pads_ragged_rows() -> None:
    assert markdown_table([["a", "b"], ["1"]]) == "| a | b |\n|---|---|\n| 1 |  |"


def test_every_error_class_is_exported_from_the_package() -> None:
    error_classes = {
        name
        for name, value in vars(extract.errors).items()
        if isinstance(value, type) and issubclass(value, ExtractionError)
    }

    assert error_classes <= set(extract.__all__)
    assert all(hasattr(extract, name) for name in extract.__all__)


@settings(deadline=None)  # CI machines are shared; speed is not under test
@given(st.lists(st.text(min_size=1).filter(str.strip), min_size=1, max_size=6))
def test_every_character_of_a_page_maps_back_to_that_page(bodies: list[str]) -> None:
    extraction = assemble_pages(bodies, "pdf")

    ends = [*extraction.page_offsets[1:], len(extraction.markdown)]
    for number, (start, end) in enumerate(zip(extraction.page_offsets, ends, strict=True), 1):
        assert extraction.markdown.startswith(f"<!-- page {number} -->", start)
        assert {extraction.page_of(offset) for offset in range(start, end)} == {number}


@settings(deadline=None)
@given(st.lists(st.lists(st.text(max_size=8), min_size=1, max_size=4), min_size=1, max_size=5))
def test_markdown_table_rows_always_have_the_header_width(rows: list[list[str]]) -> None:
    table = markdown_table(rows)
    if not table:
        return
    lines = table.split("\n")
    unescaped_pipes = [line.replace("\\|", "").count("|") for line in lines]
    assert len(lines) == len(rows) + 1
    assert len(set(unescaped_pipes)) == 1
