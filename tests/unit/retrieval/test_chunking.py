from __future__ import annotations

import hashlib
import itertools
import re
from pathlib import Path

import pymupdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from retrieval.chunking import CHUNKER_VERSION, chunk_layout, chunk_markdown, chunks_from_layout
from retrieval.types import Chunk, PassageBounds, passage_text
from tests.support.paths import CORPUS_DIR

MARKER_LINE_RE = re.compile(r"^[ \t]*<!--[ \t]*page[ \t]+(\d+)[ \t]*-->[ \t]*(?:\r?\n|$)", re.M)


def without_markers(text: str) -> str:
    return MARKER_LINE_RE.sub("", text)


def marker_spans(markdown: str) -> list[tuple[int, int, int]]:
    return [(m.start(), m.end(), int(m.group(1))) for m in MARKER_LINE_RE.finditer(markdown)]


def page_of(markdown: str, offset: int) -> int:
    page = 1
    for start, _, number in marker_spans(markdown):
        if start <= offset:
            page = number
    return page


def chunk_at(chunks: list[Chunk], offset: int) -> Chunk:
    (found,) = [chunk for chunk in chunks if chunk.start <= offset < chunk.end]
    return found


# --- properties --------------------------------------------------------------

WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABC0123456789", min_size=1, max_size=12)
LONG_WORD = st.text(alphabet="xyz", min_size=60, max_size=300)


@st.composite
def sentences(draw: st.DrawFn) -> str:
    words = draw(st.lists(st.one_of(WORD, WORD, WORD, WORD, LONG_WORD), min_size=1, max_size=15))
    return " ".join(words) + draw(st.sampled_from([".", "!", "?", ""]))


@st.composite
def blocks(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(["para", "para", "heading", "table", "code", "list", "marker"]))
    if kind == "para":
        lines = draw(st.lists(sentences(), min_size=1, max_size=8))
        return draw(st.sampled_from([" ", "\n"])).join(lines)
    if kind == "heading":
        return "#" * draw(st.integers(1, 4)) + " " + " ".join(draw(st.lists(WORD, min_size=1)))
    if kind == "table":
        columns = draw(st.integers(1, 4))
        rows = draw(st.lists(st.lists(WORD, min_size=columns, max_size=columns), max_size=20))
        header = "| " + " | ".join(f"h{i}" for i in range(columns)) + " |"
        separator = "|" + "---|" * columns
        return "\n".join([header, separator, *("| " + " | ".join(row) + " |" for row in rows)])
    if kind == "code":
        lines = draw(st.lists(st.lists(WORD, max_size=8).map(" ".join), max_size=40))
        return "```\n" + "\n".join(lines) + "\n```"
    if kind == "list":
        items = draw(st.lists(sentences(), min_size=1, max_size=12))
        return "\n".join(f"- {item}" for item in items)
    return f"<!-- page {draw(st.integers(1, 9))} -->"


@st.composite
def documents(draw: st.DrawFn) -> str:
    parts = draw(st.lists(blocks(), max_size=14))
    separators = draw(st.lists(st.sampled_from(["\n", "\n\n", "\n\n\n"]), min_size=len(parts)))
    return "".join(part + separator for part, separator in zip(parts, separators, strict=False))


CHUNK_SIZES = st.sampled_from([60, 150, 400])


def long_token_around(markdown: str, offset: int, chunk_size: int) -> bool:
    """True when ``offset`` falls inside a run of non-space characters longer than a chunk."""
    for match in re.finditer(r"\S+", markdown):
        if match.start() < offset < match.end():
            return match.end() - match.start() > chunk_size
    return False


PROPERTY_SETTINGS = settings(max_examples=50, deadline=None)


@PROPERTY_SETTINGS
@given(markdown=documents(), chunk_size=CHUNK_SIZES)
def test_chunk_spans_are_ordered_and_ids_are_deterministic(markdown: str, chunk_size: int) -> None:
    chunks = chunk_markdown("doc-1", markdown, chunk_size=chunk_size)
    for chunk in chunks:
        assert 0 <= chunk.start < chunk.end <= len(markdown)
    for before, after in itertools.pairwise(chunks):
        assert before.end <= after.start
    assert chunk_markdown("doc-1", markdown, chunk_size=chunk_size) == chunks
    assert [chunk.id for chunk in chunks] == [f"doc-1:{i}" for i in range(len(chunks))]
    assert [chunk.ordinal for chunk in chunks] == list(range(len(chunks)))


@PROPERTY_SETTINGS
@given(markdown=documents(), chunk_size=CHUNK_SIZES)
def test_chunks_cover_every_character_except_page_markers(markdown: str, chunk_size: int) -> None:
    chunks = chunk_markdown("doc", markdown, chunk_size=chunk_size)
    covered = [False] * len(markdown)
    for chunk in chunks:
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
        body = without_markers(markdown[chunk.start : chunk.end])
        assert chunk.text.endswith(body)  # only a continued table adds its header in front
        assert "<!-- page" not in chunk.text
        first, last = page_of(markdown, chunk.start), page_of(markdown, chunk.end - 1)
        assert chunk.pages == (min(first, last), max(first, last))
    for start, end, _ in marker_spans(markdown):
        covered[start:end] = [True] * (end - start)
    uncovered = [i for i, char in enumerate(markdown) if not covered[i] and not char.isspace()]
    assert uncovered == []


@PROPERTY_SETTINGS
@given(markdown=documents(), chunk_size=CHUNK_SIZES)
def test_chunks_start_and_end_between_words(markdown: str, chunk_size: int) -> None:
    for chunk in chunk_markdown("doc", markdown, chunk_size=chunk_size):
        if chunk.start > 0 and not markdown[chunk.start - 1].isspace():
            assert long_token_around(markdown, chunk.start, chunk_size)
        if chunk.end < len(markdown) and not markdown[chunk.end].isspace():
            assert long_token_around(markdown, chunk.end, chunk_size)


@PROPERTY_SETTINGS
@given(markdown=documents(), chunk_size=CHUNK_SIZES)
def test_a_layout_read_back_gives_chunks_that_hold_to_the_chunker_s_rules(
    markdown: str, chunk_size: int
) -> None:
    """What a search slices from a layout read back from storage (as plain values) holds to
    the chunker's rules, checked here by this module's own definitions: each chunk is its
    span without page markers, after a continued table's header only; its pages are those its
    first and last characters are on; its key is the sha256 of its passage."""
    layout = [
        PassageBounds(*list(bounds)) for bounds in chunk_layout(markdown, chunk_size=chunk_size)
    ]
    chunks = chunks_from_layout("doc", markdown, layout)
    assert len(chunks) == len(layout)
    for bounds, chunk in zip(layout, chunks, strict=True):
        assert chunk.text == bounds.prefix + without_markers(markdown[bounds.start : bounds.end])
        if bounds.prefix:  # a table's header and separator rows, from the Markdown
            header = bounds.prefix.removesuffix("\n")
            assert header in markdown and header.lstrip().startswith("|")
        first, last = page_of(markdown, bounds.start), page_of(markdown, bounds.end - 1)
        assert (bounds.first_page, bounds.last_page) == (min(first, last), max(first, last))
        assert chunk.pages == (bounds.first_page, bounds.last_page)
        assert chunk.heading == bounds.heading
        assert (
            chunk.key
            == hashlib.sha256(passage_text(chunk.heading, chunk.text).encode()).hexdigest()
        )
    assert chunks == chunk_markdown("doc", markdown, chunk_size=chunk_size)


def test_a_layout_keeps_a_continued_table_s_header_and_drops_a_marker_inside_a_chunk() -> None:
    header = "| id | name |\n|---|---|"
    rows = "\n".join(f"| {i} | item {i} |" for i in range(40))
    markdown = f"# Data\n\n<!-- page 2 -->\n{header}\n{rows}\n"
    layout = chunk_layout(markdown, chunk_size=200)
    assert layout[0].prefix == "" and all(part.prefix == header + "\n" for part in layout[1:])
    assert layout[0].first_page == 1 and layout[0].last_page == 2  # heading, then the marker
    chunks = chunks_from_layout("d", markdown, layout)
    assert "<!-- page" not in chunks[0].text
    assert chunks == chunk_markdown("d", markdown, chunk_size=200)


def test_a_layout_that_cannot_be_the_markdown_s_is_refused() -> None:
    markdown = "# One\n\nFirst part.\n\n# Two\n\nSecond part.\n"
    first, second = chunk_layout(markdown, chunk_size=14)
    for wrong in (
        [first._replace(end=len(markdown) + 1)],  # past the end
        [second, first],  # out of order
        [first, first],  # overlapping
        [first._replace(end=first.start)],  # empty
        [first._replace(first_page=3, last_page=2)],  # pages reversed
    ):
        with pytest.raises(ValueError, match="does not fit"):
            chunks_from_layout("d", markdown, wrong)
    assert chunks_from_layout("d", markdown, []) == []


# --- examples ----------------------------------------------------------------


def test_chunks_carry_their_heading_breadcrumb() -> None:
    markdown = (
        "Preface text.\n\n# Results\n\nOverview of results.\n\n## Table 2\n\nNumbers here.\n\n"
        "## Table 3\n\nMore numbers.\n\n# Discussion\n\nWhat it means.\n"
    )
    chunks = chunk_markdown("d", markdown, chunk_size=30)
    by_text = {chunk.text.splitlines()[-1]: chunk.heading for chunk in chunks}
    assert by_text == {
        "Preface text.": "",
        "Overview of results.": "Results",
        "Numbers here.": "Results > Table 2",
        "More numbers.": "Results > Table 3",
        "What it means.": "Discussion",
    }


def test_a_heading_starts_a_new_chunk_and_stays_with_its_body() -> None:
    markdown = "Intro words.\n\n# Methods\n\nWe measured things.\n"
    first, second = chunk_markdown("d", markdown, chunk_size=1000)
    assert first.text == "Intro words."
    assert second.text == "# Methods\n\nWe measured things."
    assert second.heading == "Methods"


def test_consecutive_headings_share_one_chunk() -> None:
    markdown = "# Results\n## Table 2\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"
    (chunk,) = chunk_markdown("d", markdown, chunk_size=1000)
    assert chunk.heading == "Results > Table 2"
    assert chunk.text.startswith("# Results\n## Table 2")


def test_a_long_table_splits_between_rows_repeating_its_header() -> None:
    header = "| id | name | value |\n|---:|------|-------|"
    rows = [f"| {i} | item {i} | {i * 7} |" for i in range(400)]
    markdown = "# Data\n\n" + header + "\n" + "\n".join(rows) + "\n\nAfter the table.\n"
    chunks = chunk_markdown("d", markdown, chunk_size=500)
    table_chunks = [chunk for chunk in chunks if "| item " in chunk.text]
    assert len(table_chunks) > 10
    seen_rows: list[str] = []
    for chunk in table_chunks:
        lines = chunk.text.splitlines()
        body = lines[lines.index(header.splitlines()[0]) :]
        assert body[:2] == header.splitlines()
        assert len(chunk.text) <= 500 + len("# Data\n\n")
        seen_rows.extend(line for line in body[2:] if line.startswith("| ") and "item" in line)
    assert seen_rows == rows


def test_an_overlong_paragraph_splits_at_sentence_ends() -> None:
    sentences = [f"Sentence number {i} says something about topic {i}." for i in range(60)]
    markdown = " ".join(sentences)
    chunks = chunk_markdown("d", markdown, chunk_size=300)
    assert len(chunks) > 5
    for chunk in chunks:
        assert len(chunk.text) <= 300
        assert chunk.text.startswith("Sentence number")
        assert chunk.text.endswith(".")
    assert " ".join(chunk.text for chunk in chunks) == markdown


def test_decimal_points_and_abbreviations_without_a_space_do_not_end_sentences() -> None:
    sentence = "Pi is about 3.14159 and e is about 2.71828, see fig.3 for the plot."
    chunks = chunk_markdown("d", " ".join([sentence] * 4), chunk_size=len(sentence) + 5)
    assert [chunk.text for chunk in chunks] == [sentence] * 4


def test_an_overlong_chinese_paragraph_splits_after_full_stops() -> None:
    sentences = [f"第{i}句话讲述了一个关于机器学习的故事。" for i in range(40)]
    chunks = chunk_markdown("d", "".join(sentences), chunk_size=100)
    assert len(chunks) > 3
    for chunk in chunks:
        assert chunk.text.endswith("。")
        assert len(chunk.text) <= 100
    assert "".join(chunk.text for chunk in chunks) == "".join(sentences)


def test_an_overlong_sentence_splits_at_words() -> None:
    markdown = " ".join(f"word{i}" for i in range(300))
    chunks = chunk_markdown("d", markdown, chunk_size=100)
    assert all(len(chunk.text) <= 100 for chunk in chunks)
    assert " ".join(chunk.text for chunk in chunks) == markdown


def test_a_code_block_stays_whole_up_to_four_chunk_sizes() -> None:
    code = "```python\n" + "\n".join(f"x_{i} = compute({i})" for i in range(40)) + "\n```"
    markdown = f"Before.\n\n{code}\n\nAfter.\n"
    chunks = chunk_markdown("d", markdown, chunk_size=len(code) // 3)
    assert [chunk.text for chunk in chunks] == ["Before.", code, "After."]


def test_a_code_block_over_four_chunk_sizes_splits_at_lines() -> None:
    lines = [f"value_{i} = compute({i})" for i in range(200)]
    markdown = "```\n" + "\n".join(lines) + "\n```\n"
    chunks = chunk_markdown("d", markdown, chunk_size=200)
    assert len(chunks) > 4
    for chunk in chunks:
        assert len(chunk.text) <= 200
        for line in chunk.text.splitlines():
            assert line in lines or line == "```"


def test_page_markers_drive_page_ranges_and_are_not_chunk_text() -> None:
    markdown = (
        "<!-- page 1 -->\nFirst page text.\n\n<!-- page 2 -->\nSecond page text.\n\n"
        "<!-- page 3 -->\nThird page starts\nand continues.\n<!-- page 4 -->\nOn four.\n"
    )
    roomy = chunk_markdown("d", markdown, chunk_size=1000)
    assert [(chunk.text, chunk.pages) for chunk in roomy] == [
        ("First page text.", (1, 1)),
        ("Second page text.", (2, 2)),
        ("Third page starts\nand continues.", (3, 3)),
        ("On four.", (4, 4)),
    ], "a page boundary ends a chunk even when the budget has room"
    assert all("<!--" not in chunk.text for chunk in roomy)
    small = chunk_markdown("d", markdown, chunk_size=20)
    assert [(chunk.text, chunk.pages) for chunk in small] == [
        ("First page text.", (1, 1)),
        ("Second page text.", (2, 2)),
        ("Third page starts", (3, 3)),
        ("and continues.", (3, 3)),
        ("On four.", (4, 4)),
    ]


def test_markdown_without_page_markers_is_page_one() -> None:
    chunks = chunk_markdown("d", "Just some text.\n\nAnd more.", chunk_size=10)
    assert {chunk.pages for chunk in chunks} == {(1, 1)}


def test_chunk_key_is_the_sha256_of_its_passage() -> None:
    import hashlib

    (chunk,) = chunk_markdown("d", "# Title\n\nBody text.", chunk_size=100)
    assert chunk.passage == "Title\n\n# Title\n\nBody text."
    assert chunk.key == hashlib.sha256(chunk.passage.encode()).hexdigest()


def test_chunker_version_is_an_integer() -> None:
    assert isinstance(CHUNKER_VERSION, int)


# --- real PDFs ----------------------------------------------------------------


def page_marked_markdown(path: Path) -> str:
    with pymupdf.open(path) as pdf:
        return "".join(
            f"<!-- page {number} -->\n{page.get_text()}\n" for number, page in enumerate(pdf, 1)
        )


PDFS = ["papers_acl/P19-1164.pdf", "papers/tracemonkey.pdf", "non_latin/russian.pdf"]


@pytest.mark.parametrize("name", PDFS)
def test_chunks_of_a_real_pdf_report_the_page_their_text_is_on(name: str) -> None:
    markdown = page_marked_markdown(CORPUS_DIR / name)
    chunks = chunk_markdown("pdf", markdown, chunk_size=800)
    markers = marker_spans(markdown)
    assert len(markers) >= 1
    checked = 0
    for index, (_, page_start, number) in enumerate(markers):
        page_end = markers[index + 1][0] if index + 1 < len(markers) else len(markdown)
        lines = [line for line in markdown[page_start:page_end].splitlines() if len(line) >= 25]
        unique = [line for line in lines if markdown.count(line) == 1]
        if not unique:
            continue
        line = unique[len(unique) // 2]
        offset = markdown.index(line) + len(line) - len(line.lstrip())
        chunk = chunk_at(chunks, offset)
        assert chunk.pages[0] <= number <= chunk.pages[1]
        assert chunk.pages == (page_of(markdown, chunk.start), page_of(markdown, chunk.end - 1))
        checked += 1
    assert checked >= 1
