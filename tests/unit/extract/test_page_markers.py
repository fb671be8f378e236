"""The page-marker format: one module writes, finds and neutralises it."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from extract import extract_document
from extract.markdown import assemble_pages
from extract.page_markers import (
    PageMarker,
    find_page_markers,
    is_page_marker,
    neutralise_page_markers,
    page_marker,
    slice_pages,
)
from retrieval import ChunkIndex, SourceDocument, chunk_markdown, search
from retrieval.rerankers import make_reranker

LOOK_ALIKE = "  <!--  page 99 -->"


def test_a_marker_look_alike_in_an_upload_does_not_become_a_page_break() -> None:
    upload = f"# Notes\n\nThe first paragraph.\n\n{LOOK_ALIKE}\n\nThe zebra paragraph.\n"
    extraction = extract_document(upload.encode(), "notes.md", "text/markdown")
    assert extraction.page_count == 1

    document = SourceDocument("notes", "notes.md", "h", extraction.markdown)
    assert {chunk.pages for chunk in chunk_markdown("notes", extraction.markdown)} == {(1, 1)}
    index = ChunkIndex()
    index.add([document])
    result = search(index, "zebra", [document.ref], reranker=make_reranker("none"))
    assert result.hits
    assert all(hit.pages == (1, 1) for hit in result.hits)
    assert all(source.pages == (1,) for source in result.sources)


LOOK_ALIKES = st.builds(
    lambda lead, inner, gap, tail, page: f"{lead}<!--{inner}page{gap}{page}{tail}-->{lead}",
    st.sampled_from(["", " ", "\t", "  "]),
    st.sampled_from(["", " ", "\t ", "  "]),
    st.sampled_from([" ", "\t", "  "]),
    st.sampled_from(["", " ", "\t"]),
    st.integers(0, 10_000),
)
BREAKS = st.sampled_from(["\n", "\r\n", "\r", "\f", "\v", "\u2028", "\x85", "\x1e"])
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=40)


@st.composite
def hostile_bodies(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.one_of(TEXT, LOOK_ALIKES), max_size=8))
    return "".join(part + draw(BREAKS) for part in parts)


@given(LOOK_ALIKES)
def test_every_look_alike_is_read_as_a_marker(line: str) -> None:
    assert find_page_markers(f"before\n{line}\nafter")
    assert is_page_marker(line)


@given(hostile_bodies())
def test_neutralised_text_holds_no_marker(body: str) -> None:
    neutralised = neutralise_page_markers(body)
    assert find_page_markers(neutralised) == []
    assert neutralised.count("\n") == body.count("\n")


@given(st.lists(hostile_bodies(), min_size=1, max_size=5))
def test_assembled_pages_have_exactly_the_markers_written(bodies: list[str]) -> None:
    assume(any(body.strip() for body in bodies))
    extraction = assemble_pages(bodies, "markdown")
    markers = find_page_markers(extraction.markdown)
    assert [marker.page for marker in markers] == list(range(1, len(bodies) + 1))
    assert tuple(marker.start for marker in markers) == extraction.page_offsets


def test_a_marker_is_written_in_the_canonical_form_and_found_with_its_offsets() -> None:
    markdown = f"{page_marker(1)}\n\none\n\n{page_marker(2)}\r\ntwo\n"
    assert find_page_markers(markdown) == [
        PageMarker(0, 16, 1),
        PageMarker(22, 39, 2),
    ]


def test_a_page_range_is_sliced_at_its_markers() -> None:
    markdown = "".join(f"{page_marker(n)}\n\npage {n} text\n\n" for n in (1, 2, 3))
    assert slice_pages(markdown, 2, 2) == f"{page_marker(2)}\n\npage 2 text\n\n"
    assert slice_pages(markdown, 2, 9).startswith(page_marker(2))
    assert slice_pages(markdown, 2, 9).endswith("page 3 text\n\n")
    assert slice_pages(markdown, 4, 5) == ""
    assert slice_pages("no markers at all", 1, 1) == "no markers at all"
    assert slice_pages("no markers at all", 2, 2) == ""
