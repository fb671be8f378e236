from __future__ import annotations

import threading
from itertools import accumulate

import pytest

from retrieval.errors import DocumentNotIndexed
from retrieval.index import MERGED_SETS, MERGED_SHARE, ChunkIndex
from retrieval.shortlist import MergedTerms
from retrieval.types import SourceDocument


def document(number: int, content_hash: str = "v1", paragraphs: int = 20) -> SourceDocument:
    markdown = "<!-- page 1 -->\n" + "\n\n".join(
        f"Paragraph {i} of document {number} talks about topic {i * number}."
        for i in range(paragraphs)
    )
    return SourceDocument(f"doc-{number}", f"Document {number}.pdf", content_hash, markdown)


def test_missing_names_documents_not_yet_added() -> None:
    index = ChunkIndex()
    first, second = document(1), document(2)
    assert index.missing([first.ref, second.ref]) == [first.ref, second.ref]
    index.add([first])
    assert index.missing([first.ref, second.ref]) == [second.ref]


def test_a_changed_content_hash_is_a_miss() -> None:
    index = ChunkIndex()
    index.add([document(1, "v1")])
    changed = document(1, "v2")
    assert index.missing([changed.ref]) == [changed.ref]
    with pytest.raises(DocumentNotIndexed) as raised:
        index.chunks(changed.ref)
    assert raised.value.code == "document_not_indexed"
    assert raised.value.document_ids == ("doc-1",)


def test_chunks_returns_a_cached_documents_chunks() -> None:
    index = ChunkIndex(chunk_size=100)
    doc = document(3)
    index.add([doc])
    chunks = index.chunks(doc.ref)
    assert len(chunks) > 1
    assert all(chunk.document_id == "doc-3" for chunk in chunks)


def test_a_renamed_document_keeps_its_entry_and_reports_the_new_name() -> None:
    index = ChunkIndex()
    doc = document(1)
    index.add([doc])
    renamed = doc.ref._replace(name="Renamed.pdf")
    assert index.missing([renamed]) == []
    (entry,) = index.documents([renamed])
    assert entry.ref.name == "Renamed.pdf"


def test_least_recently_used_documents_are_evicted_to_stay_within_the_byte_budget() -> None:
    probe = ChunkIndex()
    probe.add([document(1)])
    one_document = probe.nbytes
    index = ChunkIndex(max_bytes=int(one_document * 2.5))
    first, second, third = document(1), document(2), document(3)
    index.add([first, second])
    assert index.missing([first.ref]) == []  # touching makes `second` the least recently used
    index.add([third])
    assert index.missing([first.ref, second.ref, third.ref]) == [second.ref]
    assert index.nbytes <= index.max_bytes
    assert len(index) == 2


def test_documents_returns_every_ref_even_when_the_cache_cannot_hold_them() -> None:
    docs = [document(i) for i in range(5)]
    index = ChunkIndex(max_bytes=1)
    entries = index.documents([doc.ref for doc in docs], add=docs)
    assert [entry.ref.id for entry in entries] == [doc.id for doc in docs]
    assert len(index) == 0


def test_adding_a_cached_document_again_keeps_the_cached_entry() -> None:
    index = ChunkIndex()
    doc = document(1)
    index.add([doc])
    before = index.chunks(doc.ref)
    index.add([doc])
    assert index.chunks(doc.ref) is before
    assert len(index) == 1


def test_concurrent_adds_and_lookups_keep_the_cache_consistent() -> None:
    docs = [document(i, paragraphs=8) for i in range(12)]
    probe = ChunkIndex()
    probe.add(docs[:1])
    index = ChunkIndex(max_bytes=probe.nbytes * 5)
    errors: list[BaseException] = []

    def work(offset: int) -> None:
        try:
            for round_number in range(30):
                picked = [docs[(offset + round_number + i) % len(docs)] for i in range(3)]
                refs = [doc.ref for doc in picked]
                index.missing(refs)
                entries = index.documents(refs, add=picked)
                assert [entry.ref for entry in entries] == refs
                assert all(entry.chunks for entry in entries)
        except BaseException as error:  # reported to the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert index.nbytes <= index.max_bytes
    assert index.nbytes == sum(
        entry.nbytes
        for entry in index.documents([doc.ref for doc in docs if not index.missing([doc.ref])])
    )


FRENCH = SourceDocument(
    "fr",
    "Rapport.md",
    "v1",
    "# Les chats\n\nLes chats dorment beaucoup pendant la journée et chassent la nuit. "
    "Ils aiment les souris et les oiseaux, mais ils préfèrent dormir au soleil.",
)


def test_a_known_language_is_taken_as_given_and_builds_what_detection_builds() -> None:
    detected = ChunkIndex(chunk_size=200)
    detected.add([FRENCH])
    (entry,) = detected.documents([FRENCH.ref])
    assert entry.language == "french"
    hinted = ChunkIndex(chunk_size=200)
    hinted.add([FRENCH], languages={"fr": "french"})
    (same,) = hinted.documents([FRENCH.ref])
    for field in ("language", "chunks", "reader_keys", "content_terms", "reference_density"):
        assert getattr(same, field) == getattr(entry, field), field
    assert same.terms.vocabulary == entry.terms.vocabulary
    assert (same.terms.postings == entry.terms.postings).all()
    told = ChunkIndex(chunk_size=200)
    told.add([FRENCH], languages={"fr": "german"})  # taken as given, not detected again
    assert told.documents([FRENCH.ref])[0].language == "german"


def test_a_document_s_layout_is_sliced_not_chunked_again_and_one_that_does_not_fit_is_not() -> None:
    """A layout handed with a document (stored with its terms) places its chunks: the cache
    slices them, whole or chunked only. One that cannot be the document's is chunked."""
    doc = document(3)
    plain = ChunkIndex(chunk_size=200)
    terms = plain.passage_terms(doc)
    assert terms.layout == plain.chunk_layout(doc.markdown) and len(terms.layout) > 2
    plain.add([doc])
    (expected,) = plain.documents([doc.ref])
    laid = ChunkIndex(chunk_size=200)
    laid.add([doc._replace(layout=terms.layout)])
    (same,) = laid.documents([doc.ref])
    for field in ("chunks", "reader_keys", "content_terms", "reference_density"):
        assert getattr(same, field) == getattr(expected, field), field
    assert (same.terms.postings == expected.terms.postings).all()

    one = terms.layout[0]._replace(end=terms.layout[-1].end)  # fits: followed as it is
    followed = ChunkIndex(chunk_size=200)
    (entry,) = followed.chunked_documents([doc.ref], add=[doc._replace(layout=(one,))])
    assert [(chunk.start, chunk.end) for chunk in entry.chunks] == [(one.start, one.end)]

    wrong = (terms.layout[0]._replace(end=len(doc.markdown) + 5),)
    chunked = ChunkIndex(chunk_size=200)
    (entry,) = chunked.chunked_documents([doc.ref], add=[doc._replace(layout=wrong)])
    assert entry.chunks == expected.chunks


CHINESE = SourceDocument(
    "zh",
    "量子.md",
    "v1",
    "# 量子计算\n\n量子计算机利用量子力学原理进行信息处理。研究人员在实验室中测试了新的算法，"
    "结果显示计算速度显著提高。这项研究为未来的应用打下了基础。",
)


def test_the_written_language_given_is_read_as_the_detected_one_would_be() -> None:
    """The language passed in is the written one: a text in Chinese is written in Chinese but
    stemmed as the default language (read in bigrams), whether detected or given."""
    index = ChunkIndex(chunk_size=200)
    terms = index.passage_terms(CHINESE)
    assert (terms.language, terms.written) == ("english", "chinese")
    index.add([CHINESE])
    (detected,) = index.chunked_documents([CHINESE.ref])
    assert (detected.language, detected.written_in) == ("english", "chinese")
    given = ChunkIndex(chunk_size=200)
    given.add([CHINESE], languages={"zh": "chinese"})
    (same,) = given.chunked_documents([CHINESE.ref])
    assert (same.language, same.written_in, same.chunks) == ("english", "chinese", detected.chunks)
    told = ChunkIndex(chunk_size=200)
    told.add([FRENCH], languages={"fr": "japanese"})  # taken as given, not detected again
    (french,) = told.chunked_documents([FRENCH.ref])
    assert (french.language, french.written_in) == ("english", "japanese")


def test_a_language_the_cache_could_not_have_detected_is_detected_instead() -> None:
    for languages in ({"fr": "klingon"}, {"other": "german"}, {}):
        index = ChunkIndex(chunk_size=200)
        index.add([FRENCH], languages=languages)
        assert index.documents([FRENCH.ref])[0].language == "french", languages
    fixed = ChunkIndex(chunk_size=200, language="english")  # one language for every document
    fixed.add([FRENCH], languages={"fr": "german"})
    assert fixed.documents([FRENCH.ref])[0].language == "english"


def test_a_run_of_documents_searched_again_is_scored_merged() -> None:
    index = ChunkIndex()
    docs = [document(i) for i in range(1, 4)]
    entries = index.documents([doc.ref for doc in docs], add=docs)
    before = index.nbytes
    first = index.searched_terms(entries)
    assert first == [entry.terms for entry in entries]  # apart: merging would cost more
    assert index.nbytes == before
    second = index.searched_terms(entries)
    assert isinstance(second, MergedTerms)
    assert second.offsets == (0, *accumulate(entry.terms.chunk_count for entry in entries))
    assert index.nbytes == before + second.nbytes
    assert index.searched_terms(index.documents([doc.ref for doc in docs])) is second
    # Another run (a document changed, or fewer documents) starts apart again.
    changed = [docs[0], document(2, content_hash="v2"), docs[2]]
    other = index.documents([doc.ref for doc in changed], add=changed)
    assert not isinstance(index.searched_terms(other), MergedTerms)
    assert not isinstance(index.searched_terms(entries[:2]), MergedTerms)
    index.clear()
    assert index.nbytes == 0
    assert not isinstance(index.searched_terms(entries), MergedTerms)


def test_only_the_last_few_runs_stay_merged() -> None:
    index = ChunkIndex()
    docs = [document(i) for i in range(1, MERGED_SETS + 3)]
    entries = index.documents([doc.ref for doc in docs], add=docs)
    runs = [entries[n : n + 2] for n in range(MERGED_SETS + 1)]
    merged = []
    for run in runs:
        index.searched_terms(run)
        merged.append(index.searched_terms(run))
    assert all(isinstance(m, MergedTerms) for m in merged)
    assert index.nbytes == sum(e.nbytes for e in entries) + sum(m.nbytes for m in merged[1:])
    assert index.searched_terms(runs[-1]) is merged[-1]
    assert not isinstance(index.searched_terms(runs[0]), MergedTerms)  # the oldest went


def test_merged_runs_go_before_any_document_when_the_budget_is_exceeded() -> None:
    docs = [document(i, paragraphs=60) for i in range(1, 4)]
    probe = ChunkIndex()
    entries = probe.documents([doc.ref for doc in docs], add=docs)
    documents_bytes = probe.nbytes
    probe.searched_terms(entries[:1])
    merged = probe.searched_terms(entries[:1])
    assert isinstance(merged, MergedTerms)
    index = ChunkIndex(max_bytes=documents_bytes + merged.nbytes - 1)
    run = index.documents([docs[0].ref], add=docs[:2])
    index.searched_terms(run)
    assert isinstance(index.searched_terms(run), MergedTerms)
    index.add([docs[2]])  # the three documents and the merged run no longer fit: the run goes
    assert index.missing([doc.ref for doc in docs]) == []
    assert index.nbytes == documents_bytes
    assert not isinstance(index.searched_terms(run), MergedTerms)


def test_a_run_too_large_for_its_share_of_the_budget_is_always_scored_apart() -> None:
    docs = [document(i) for i in range(1, 4)]
    probe = ChunkIndex()
    entries = probe.documents([doc.ref for doc in docs], add=docs)
    matrices_bytes = sum(entry.terms.nbytes for entry in entries)
    index = ChunkIndex(max_bytes=int(matrices_bytes / MERGED_SHARE) - 1)
    entries = index.documents([doc.ref for doc in docs], add=docs)
    for _ in range(3):
        assert not isinstance(index.searched_terms(entries), MergedTerms)
