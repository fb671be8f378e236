"""A document's chunks held column by column (:class:`retrieval.types.Chunks`): the same chunks
back, at a cost of one object to the garbage collector."""

from __future__ import annotations

import gc
import hashlib

import pytest

from retrieval.chunking import chunk_markdown
from retrieval.index import ChunkIndex
from retrieval.types import Chunk, Chunks, SourceDocument

MARKDOWN = "\n\n".join(
    [
        "<!-- page 1 -->",
        "# Title",
        "## Methods",
        "We measured the thing. " * 40,
        "<!-- page 2 -->",
        "## Results",
        "| a | b |\n|---|---|\n| 1 | 2 |",
        "It worked. " * 30,
    ]
)


def test_chunks_give_back_exactly_what_the_chunker_made() -> None:
    made = chunk_markdown("doc", MARKDOWN, chunk_size=300)
    held = Chunks("doc", made)
    assert len(held) == len(made) > 3
    assert list(held) == made
    assert [held[i] for i in range(len(held))] == made
    assert held[-1] == made[-1]
    assert held[1:3] == tuple(made[1:3])
    assert held.texts == tuple(chunk.text for chunk in made)
    assert held.headings == tuple(chunk.heading for chunk in made)
    assert held.keys == tuple(chunk.key for chunk in made)
    assert held == Chunks("doc", made)
    assert held != Chunks("doc", made[:-1])
    with pytest.raises(IndexError):
        held[len(made)]


def test_chunks_refuse_a_chunk_of_another_document_or_place() -> None:
    made = chunk_markdown("doc", MARKDOWN, chunk_size=300)
    with pytest.raises(ValueError, match="other:0"):
        Chunks("other", made)
    with pytest.raises(ValueError, match="doc:1"):
        Chunks("doc", made[1:])


def test_a_cached_documents_chunks_are_one_object_for_the_collector() -> None:
    """Why the columns: a NamedTuple is never untracked, so a tuple of Chunk values kept one
    object per passage for every full collection to walk; the columns are untracked."""
    index = ChunkIndex(chunk_size=300)
    document = SourceDocument("doc", "Report.pdf", "v1", MARKDOWN)
    (entry,) = index.chunked_documents([document.ref], add=[document])
    gc.collect()
    chunks = entry.chunks
    assert isinstance(chunks, Chunks) and gc.is_tracked(chunks)
    assert not any(gc.is_tracked(column) for column in (chunks.texts, chunks.headings, chunks.keys))
    # A tuple of the chunks themselves stays tracked, each chunk with it.
    as_tuple = tuple(chunks)
    gc.collect()
    assert gc.is_tracked(as_tuple) and all(gc.is_tracked(chunk) for chunk in as_tuple)
    assert isinstance(as_tuple[0], Chunk)


def test_a_passages_reader_key_is_the_hash_of_what_the_reranker_reads() -> None:
    """With context before it (here an informative file name), the sha256 of context and
    passage; without (every breadcrumb holds the title, the name says nothing), the chunk's
    own key. The same for a chunked entry and a whole one."""
    index = ChunkIndex(chunk_size=300)
    named = SourceDocument("named", "Vicksburg survey.pdf", "v1", MARKDOWN)
    plain = SourceDocument("plain", "Report.pdf", "v1", MARKDOWN)
    refs = [named.ref, plain.ref]
    seen_prefixes: set[bool] = set()
    for entry in [
        *index.chunked_documents(refs, add=[named, plain]),
        *index.documents(refs),
    ]:
        for ordinal, chunk in enumerate(entry.chunks):
            prefix = entry.reader_prefixes[ordinal]
            seen_prefixes.add(bool(prefix))
            text = prefix + chunk.passage
            assert entry.reader_text(ordinal) == text
            expected = hashlib.sha256(text.encode()).hexdigest() if prefix else chunk.key
            assert entry.reader_keys[ordinal] == expected
    assert seen_prefixes == {True, False}
