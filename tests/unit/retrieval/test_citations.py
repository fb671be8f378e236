from __future__ import annotations

from retrieval.citations import format_pages, sources
from retrieval.types import Hit


def make_hit(document_id: str, first_page: int, last_page: int) -> Hit:
    return Hit(
        chunk_id=f"{document_id}:{first_page}",
        document_id=document_id,
        document_name=f"{document_id}.pdf",
        pages=(first_page, last_page),
        heading="",
        text="text",
        score=1.0,
        bm25=1.0,
    )


def test_sources_list_each_document_once_in_first_appearance_order() -> None:
    hits = [make_hit("b", 9, 9), make_hit("a", 4, 5), make_hit("b", 2, 3), make_hit("a", 4, 4)]
    cited = sources(hits)
    assert [(s.id, s.name, s.first_page, s.pages) for s in cited] == [
        ("b", "b.pdf", 2, (2, 9)),
        ("a", "a.pdf", 4, (4,)),
    ]


def test_no_hits_cite_no_sources() -> None:
    assert sources([]) == []


def test_page_ranges_read_as_text() -> None:
    assert format_pages((4, 4)) == "p. 4"
    assert format_pages((4, 6)) == "pp. 4-6"
