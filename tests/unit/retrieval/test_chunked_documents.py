"""Documents only chunked (:meth:`ChunkIndex.chunked_documents`): what a prefiltered search
reads. The answers must be those of whole entries; only the work differs."""

from __future__ import annotations

import json
import threading

import pytest

from retrieval.comparison import comparison_sides
from retrieval.index import ChunkedDocument, ChunkIndex, IndexedDocument
from retrieval.pipeline import search
from retrieval.rerankers.none import NoReranker
from retrieval.shortlist import shortlist
from retrieval.types import Prefiltered, PrefilteredPassage, SearchResult, SourceDocument
from tests.support.paths import SCIFACT_DIR

REFERENCES = (
    "## References\n\n"
    "1. Smith J, Jones K. Vitamin D and fractures. Lancet. 2001;357:1-9. doi:10.1016/x\n"
    "2. Brown A, et al. Bone density in the elderly. BMJ. 2003;326:12-15.\n"
    "3. Lee C, Park D. Insulin resistance. N Engl J Med. 2005;352:100-110.\n"
)

QUERIES = [
    "vitamin D deficiency and bone fractures",
    "tumor growth in mice",
    "insulin resistance in obese patients",
    "compare mice and rats",  # a comparison: both sides' coverage over term matrices
    "what are the conclusions",  # a document question: sections of the first documents
    "zymurgy",  # no passage has it
]


def _documents(count: int = 24) -> list[SourceDocument]:
    """SciFact abstracts, three to a document of headed pages, every fourth with references."""
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for _, line in zip(range(count * 3), lines, strict=False)]
    documents = []
    for number, start in enumerate(range(0, len(rows), 3)):
        pages = [
            f"<!-- page {n + 1} -->\n## {row['title']}\n\n{row['text']}\n\n## Conclusions\n\n"
            f"{row['text'][-300:]}\n"
            for n, row in enumerate(rows[start : start + 3])
        ]
        if number % 4 == 0:
            pages.append(f"<!-- page {len(pages) + 1} -->\n{REFERENCES}")
        markdown = "\n".join(pages)
        documents.append(SourceDocument(f"doc-{number}", f"paper {number}.md", "v1", markdown))
    return documents


def _prefiltered(query: str, documents: list[SourceDocument]) -> Prefiltered:
    """The exhaustive shortlist, as the prefilter hands it in (scored elsewhere)."""
    index = ChunkIndex(chunk_size=400)
    whole = index.documents([doc.ref for doc in documents], add=documents)
    _, ids, unknown = index.query_terms(query, whole)
    picked = shortlist(ids, [doc.terms for doc in whole], keep=30, unknown_terms=unknown)
    return Prefiltered(
        [
            PrefilteredPassage(whole[e.document].ref.id, e.ordinal, e.bm25, e.coverage)
            for e in picked.entries
            if e.bm25 > 0
        ],
        picked.total,
    )


def _answer(result: SearchResult) -> SearchResult:
    return result._replace(stage_seconds=None)


def _search(
    index: ChunkIndex, query: str, prefiltered: Prefiltered, docs: list[SourceDocument]
) -> SearchResult:
    wanted = {p.document_id for p in prefiltered.passages}
    chosen = [doc for doc in docs if doc.id in wanted]
    return search(
        index,
        query,
        [doc.ref for doc in chosen],
        reranker=NoReranker(),
        top_k=8,
        keep=30,
        documents=chosen,
        prefiltered=prefiltered,
    )


@pytest.mark.parametrize("query", QUERIES)
def test_a_prefiltered_search_over_chunked_documents_answers_as_over_whole_ones(
    query: str,
) -> None:
    documents = _documents()
    prefiltered = _prefiltered(query, documents)
    whole = ChunkIndex(chunk_size=400)
    whole.add(documents)  # every entry whole: the search as it was before chunked entries
    expected = _search(whole, query, prefiltered, documents)
    chunked = ChunkIndex(chunk_size=400)
    got = _search(chunked, query, prefiltered, documents)
    assert _answer(got) == _answer(expected)
    assert got.hits or not prefiltered.passages
    refs = [doc.ref for doc in documents if not chunked.missing([doc.ref])]
    entries = chunked.chunked_documents(refs)
    shown = {hit.document_id for hit in got.hits}
    made_whole = {entry.ref.id for entry in entries if isinstance(entry, IndexedDocument)}
    if comparison_sides(query) is None:  # a comparison reads every candidate's document
        assert made_whole <= shown, "documents no hit of which is shown were tokenised"
        assert any(isinstance(entry, ChunkedDocument) for entry in entries) or len(shown) == len(
            entries
        )


def test_a_chunked_entry_figures_each_passage_as_a_whole_one_and_is_made_whole_in_place() -> None:
    documents = _documents(8)
    index = ChunkIndex(chunk_size=400)
    chunked = index.chunked_documents([doc.ref for doc in documents], add=documents)
    assert all(isinstance(entry, ChunkedDocument) for entry in chunked)
    other = ChunkIndex(chunk_size=400)
    reference = other.documents([doc.ref for doc in documents], add=documents)
    assert any(density > 0 for entry in reference for density in entry.reference_density)
    for light, full in zip(chunked, reference, strict=True):
        assert light.chunks == full.chunks and light.reader_keys == full.reader_keys
        ordinals = range(len(full.chunks))
        assert [light.reference_density_of(i) for i in ordinals] == list(full.reference_density)
        assert [light.content_terms_of(i) for i in ordinals] == list(full.content_terms)
    before = index.nbytes
    made = index.documents([documents[0].ref])  # asked whole: made so from its chunks, cached
    assert isinstance(index.chunked_documents([documents[0].ref])[0], IndexedDocument)
    assert _frequencies(index, made[0]) == _frequencies(other, reference[0])
    assert index.nbytes == before - chunked[0].nbytes + made[0].nbytes
    made_here = index.whole(chunked[1])
    assert _frequencies(index, made_here) == _frequencies(other, reference[1])
    assert index.nbytes == sum(
        entry.nbytes for entry in index.chunked_documents([doc.ref for doc in documents])
    )


def _frequencies(index: ChunkIndex, entry: IndexedDocument) -> dict[str, list[int]]:
    """Per term of the document (as a string: each cache numbers terms its own way), the term
    frequency in each passage holding it."""
    tokenizer = index.tokenizer_for(entry.language)
    found: dict[str, list[int]] = {}
    for ordinal in range(len(entry.chunks)):
        for term in tokenizer.document_terms(entry.reader_text(ordinal)):
            term_id = tokenizer.term_id(term)
            span = None if term_id is None else entry.terms.span(term_id)
            assert span is not None, term
            found[term] = entry.terms.postings[1, span[0] : span[1]].tolist()
    return found


def test_chunked_and_whole_lookups_at_once_keep_the_cache_within_its_bound() -> None:
    documents = _documents(12)
    probe = ChunkIndex(chunk_size=400)
    probe.add(documents[:1])
    index = ChunkIndex(chunk_size=400, max_bytes=probe.nbytes * 4)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for round_number in range(20):
                picked = [documents[(offset + round_number + i) % len(documents)] for i in range(3)]
                refs = [doc.ref for doc in picked]
                if (offset + round_number) % 2:
                    entries = index.chunked_documents(refs, add=picked)
                    made = index.whole(entries[0])  # as the answer spans of a shown hit
                    assert made.ref == refs[0] and made.terms.chunk_count == len(made.chunks)
                else:
                    entries = list(index.documents(refs, add=picked))
                assert [entry.ref for entry in entries] == refs
        except BaseException as error:  # reported to the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert index.nbytes <= index.max_bytes
    cached = [doc.ref for doc in documents if not index.missing([doc.ref])]
    assert index.nbytes == sum(entry.nbytes for entry in index.chunked_documents(cached))
