"""An in-process cache of chunked, tokenised documents.

A cache, not an index: an entry is keyed by the document id, its content
hash, :data:`~retrieval.chunking.CHUNKER_VERSION`, the chunk size and the
tokenizer configuration, so a changed document is simply a different key and
an entry can never be stale. It is bounded in bytes (an estimate of the
footprint), evicts the least recently used entries and starts empty after a
restart. The service asks :meth:`ChunkIndex.missing` which documents need
their Markdown loaded and hands those to :meth:`ChunkIndex.add` (or to
``search(documents=...)``, which adds and looks up in one step).

An entry is whole (:class:`IndexedDocument`: every passage tokenised into a term matrix, what
scoring all of them needs) or only chunked (:class:`ChunkedDocument`, from
:meth:`ChunkIndex.chunked_documents`): a search whose shortlist was scored elsewhere (the
service's lexical prefilter) reads a few passages of each document, so tokenising all of them
would be most of its time. A chunked entry works out a passage's noise figures when first asked
and becomes whole when a whole one is asked for (:meth:`ChunkIndex.documents`), from its own
chunks.
"""

from __future__ import annotations

import hashlib
import sys
import threading
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from extract.page_markers import without_page_markers
from retrieval.chunking import (
    CHUNKER_VERSION,
    DEFAULT_CHUNK_SIZE,
    chunk_layout,
    chunks_from_layout,
)
from retrieval.context import CONTEXT_VERSION, context_prefixes, document_context
from retrieval.errors import DocumentNotIndexed
from retrieval.language import CJK_LANGUAGES, SAMPLE_CHARS, detect_language
from retrieval.noise import citation_density
from retrieval.shortlist import (
    MergedTerms,
    Searched,
    TermMatrix,
    build_term_matrix,
    merge_term_matrices,
)
from retrieval.tokenize import DEFAULT_LANGUAGE, STEMMED_LANGUAGES, Tokenizer
from retrieval.types import Chunks, DocumentRef, PassageBounds, SourceDocument

DEFAULT_MAX_BYTES = 512 * 1024 * 1024
AUTO_LANGUAGE = "auto"
"""The ``language`` that detects each document's language."""
LANGUAGE_SAMPLE_CHARS = 2 * SAMPLE_CHARS
"""How much of a document's Markdown :meth:`ChunkIndex.written_language` reads: its first
:data:`~retrieval.language.SAMPLE_CHARS` once page markers are removed, with room for them."""
_DETECTABLE = STEMMED_LANGUAGES | CJK_LANGUAGES
"""What :func:`~retrieval.language.detect_language` can say of a text (Snowball's names, and
the languages tokenised into bigrams)."""
_CHUNK_OVERHEAD_BYTES = 300
"""A chunk's slots in :class:`~retrieval.types.Chunks`' columns, its four bounds and its key
string, roughly."""

CacheKey = tuple[str, str, int, int, str]
"""(document id, content hash, chunker version, chunk size, tokenizer config)."""
MERGED_SETS = 4
"""How many runs of documents :meth:`ChunkIndex.searched_terms` keeps merged: a few
projects searched in turn."""
MERGED_SHARE = 0.25
"""The largest share of ``max_bytes`` one merged run may take (about what its documents'
matrices take); a larger run is always searched apart."""
SEARCHED_ONCE_REMEMBERED = 64
"""How many runs searched once :meth:`ChunkIndex.searched_terms` remembers, to merge one when
it is searched again."""


class IndexedDocument(NamedTuple):
    """One document as the shortlist needs it."""

    ref: DocumentRef
    chunks: Chunks
    terms: TermMatrix
    nbytes: int
    """Estimated memory footprint."""
    language: str = DEFAULT_LANGUAGE
    """The Snowball language its passages were stemmed with."""
    reference_density: tuple[float, ...] = ()
    """Per chunk, how much it reads like a reference list
    (:func:`retrieval.noise.citation_density`)."""
    reader_prefixes: tuple[str, ...] = ()
    """Per chunk, the context lines read before it (:func:`retrieval.context.context_prefixes`;
    a handful of shared strings per document)."""
    reader_keys: tuple[str, ...] = ()
    """Per chunk, the sha256 hex of :meth:`reader_text`: the reranker's cache key, which
    changes whenever the text the model reads does (the chunk's own key when no context is
    added)."""
    content_terms: tuple[int, ...] = ()
    """Per chunk, how many terms its own text has (its context and breadcrumb not counted):
    what :func:`retrieval.noise.thinness` reads."""
    written_in: str = DEFAULT_LANGUAGE
    """The language its text is written in (:meth:`ChunkIndex.written_language`)."""

    def reader_text(self, ordinal: int) -> str:
        """What BM25 and the reranker read for chunk ``ordinal``: context, breadcrumb, text
        (:func:`retrieval.context.in_context`)."""
        return self.reader_prefixes[ordinal] + self.chunks.passage(ordinal)

    def reader_passage(self, ordinal: int) -> tuple[str, str]:
        """``(key, text)`` of chunk ``ordinal`` as the reranker reads it."""
        return self.reader_keys[ordinal], self.reader_text(ordinal)

    def reference_density_of(self, ordinal: int) -> float:
        return self.reference_density[ordinal]

    def content_terms_of(self, ordinal: int, length: int | None = None) -> int:
        """Terms of chunk ``ordinal``'s own text (``length``, its terms as BM25 read them,
        is for a chunked entry: here they are known)."""
        return self.content_terms[ordinal]


class PassageNoise:
    """A chunked document's per-passage figures the noise demotions read (citation density,
    terms of the passage's own text), each worked out when first asked for, as
    :class:`IndexedDocument` holds them for every passage. Thread-safe: a figure two searches
    work out at once is the same figure."""

    __slots__ = ("_chunks", "_density", "_lengths", "_prefixes", "_terms", "_tokenizer")

    def __init__(self, tokenizer: Tokenizer, chunks: Chunks, prefixes: Sequence[str]) -> None:
        self._tokenizer, self._chunks, self._prefixes = tokenizer, chunks, prefixes
        self._density: dict[int, float] = {}
        self._terms: dict[int, int] = {}
        self._lengths: dict[str, int] = {}

    def reference_density(self, ordinal: int) -> float:
        found = self._density.get(ordinal)
        if found is None:
            chunks = self._chunks
            found = self._density[ordinal] = citation_density(
                chunks.texts[ordinal], chunks.headings[ordinal]
            )
        return found

    def content_terms(self, ordinal: int, length: int | None = None) -> int:
        found = self._terms.get(ordinal)
        if found is None:
            heading, prefix = self._chunks.headings[ordinal], self._prefixes[ordinal]
            if length is None:
                passage = self._chunks.passage(ordinal)
                (ids,) = self._tokenizer.documents_term_ids([prefix + passage])
                length = len(ids)
            own = length - self._length(prefix) - self._length(heading)
            found = self._terms[ordinal] = max(0, own)
        return found

    def _length(self, text: str) -> int:
        found = self._lengths.get(text)
        if found is None:
            found = self._lengths[text] = len(self._tokenizer.document_terms(text)) if text else 0
        return found


class ChunkedDocument(NamedTuple):
    """One document chunked but not tokenised: what a search reads of a shortlist worked out
    elsewhere (:meth:`ChunkIndex.chunked_documents`)."""

    ref: DocumentRef
    chunks: Chunks
    nbytes: int
    """Estimated memory footprint, its noise figures for every passage counted."""
    language: str
    reader_prefixes: tuple[str, ...]
    reader_keys: tuple[str, ...]
    noise: PassageNoise
    written_in: str

    def reader_text(self, ordinal: int) -> str:
        return self.reader_prefixes[ordinal] + self.chunks.passage(ordinal)

    def reader_passage(self, ordinal: int) -> tuple[str, str]:
        return self.reader_keys[ordinal], self.reader_text(ordinal)

    def reference_density_of(self, ordinal: int) -> float:
        return self.noise.reference_density(ordinal)

    def content_terms_of(self, ordinal: int, length: int | None = None) -> int:
        """Terms of chunk ``ordinal``'s own text; ``length`` (its terms as BM25 read them:
        context, breadcrumb and text) spares tokenising it."""
        return self.noise.content_terms(ordinal, length)


CachedDocument = IndexedDocument | ChunkedDocument
"""An entry of the cache: whole, or only chunked."""


class PassageTerms(NamedTuple):
    """A document's passages as BM25 reads them, as words: what a lexical index stores
    (:meth:`ChunkIndex.passage_terms`)."""

    language: str
    """The language its passages are stemmed in (:meth:`ChunkIndex.document_language`)."""
    terms: list[list[str]]
    """Per chunk, in chunk order: its terms, repeats kept."""
    written: str
    """The language its text is written in (:meth:`ChunkIndex.written_language`): stored
    beside the terms, it spares a search detecting it again (:meth:`ChunkIndex.documents`)."""
    layout: tuple[PassageBounds, ...] | None = None
    """Where its chunks lie (:func:`~retrieval.chunking.chunk_layout`): stored beside the
    terms, it spares a search chunking the document again (:attr:`SourceDocument.layout`).
    ``None``: not known (none is stored; the backfill works it out)."""


class QueryTerms(NamedTuple):
    """A query as the shortlist reads it, over documents of one or more languages."""

    terms: list[str]
    """Its terms under the first language's tokenizer (empty: only stopwords)."""
    ids: list[int]
    """Ids of the terms some passage has, repeats kept, merged over the languages."""
    unknown: int
    """Distinct terms no passage has (fewest over the languages)."""


class ChunkIndex:
    """Thread-safe, byte-bounded LRU cache of :class:`IndexedDocument` values."""

    def __init__(
        self,
        *,
        chunk_size: int = DEFAULT_CHUNK_SIZE,
        language: str = AUTO_LANGUAGE,
        max_bytes: int = DEFAULT_MAX_BYTES,
    ) -> None:
        """
        Args:
            language: ``"auto"`` detects each document's language
                (:func:`retrieval.language.detect_language`) and stems it with that
                language's Snowball stemmer, English when undecided, CJK or without a
                stemmer; a Snowball name stems every document with that one.
        """
        if chunk_size < 1 or max_bytes < 0:
            raise ValueError(
                f"need chunk_size >= 1 and max_bytes >= 0, got {chunk_size}, {max_bytes}"
            )
        self.chunk_size = chunk_size
        self.max_bytes = max_bytes
        self.detects_language = language.strip().lower() == AUTO_LANGUAGE
        self.tokenizer = Tokenizer(DEFAULT_LANGUAGE if self.detects_language else language)
        """The tokenizer of the default language (and of every document unless ``"auto"``)."""
        self._tokenizers = {self.tokenizer.language: self.tokenizer}
        self._tokenizers_lock = threading.Lock()
        config = f"{AUTO_LANGUAGE}+{self.tokenizer.config}" if self.detects_language else None
        config = f"{config or self.tokenizer.config}:ctx{CONTEXT_VERSION}"
        self._config = (CHUNKER_VERSION, chunk_size, config)
        self._entries: OrderedDict[CacheKey, CachedDocument] = OrderedDict()
        self._merged: OrderedDict[tuple[tuple[str, str], ...], MergedTerms] = OrderedDict()
        """Runs of documents searched whole at least twice, merged, by their (id, content
        hash) pairs (the rest of a :data:`CacheKey` is this cache's own)."""
        self._searched_once: OrderedDict[int, None] = OrderedDict()
        """Hashes of the runs searched whole once (a hash: a run of a thousand documents
        would be a thousand keys; a collision only merges a run early)."""
        self._nbytes = 0
        self._lock = threading.Lock()
        self.evictions = 0
        """Entries dropped (evicted or cleared) since start: what was cached before this last
        changed may be gone."""

    def tokenizer_for(self, language: str) -> Tokenizer:
        """The tokenizer of ``language``, numbering terms with the default one."""
        with self._tokenizers_lock:
            found = self._tokenizers.get(language)
            if found is None:
                found = Tokenizer(language, share_ids_with=self.tokenizer)
                self._tokenizers[language] = found
            return found

    def chunk_layout(self, markdown: str) -> tuple[PassageBounds, ...]:
        """Where this cache's chunks of ``markdown`` lie (what :attr:`PassageTerms.layout`
        stores)."""
        return tuple(chunk_layout(markdown, chunk_size=self.chunk_size))

    def document_language(self, markdown: str) -> str:
        """The language a document's passages are stemmed with."""
        return self._stemmed(self.written_language(markdown))

    def written_language(self, markdown: str) -> str:
        """The language a document is written in, as detected (``chinese``, ``japanese`` and
        ``korean`` included, which are tokenised into bigrams rather than stemmed); the default
        language when the text does not say, or when languages are not detected. What a
        multilingual model reads documents of other languages than a query's by
        (:mod:`retrieval.rerankers.cross_lingual`)."""
        if not self.detects_language:
            return self.tokenizer.language
        detected = detect_language(without_page_markers(markdown[:LANGUAGE_SAMPLE_CHARS]))
        return detected or self.tokenizer.language

    def _stemmed(self, written: str) -> str:
        if written in CJK_LANGUAGES or written not in STEMMED_LANGUAGES:
            return self.tokenizer.language
        return written

    def query_terms(self, query: str, documents: Sequence[CachedDocument]) -> QueryTerms:
        """The query's terms under the tokenizer of every language among ``documents``.

        A word stemmed differently by two languages contributes each form once, so
        each document matches it in its own language; a form both give is counted
        once, as often as the most repeating language has it.
        """
        languages = list(dict.fromkeys(doc.language for doc in documents))
        tokenizers = [self.tokenizer_for(language) for language in languages] or [self.tokenizer]
        first: list[str] = []
        weights: Counter[int] = Counter()
        unknown: int | None = None
        for number, tokenizer in enumerate(tokenizers):
            terms = self.language_query_terms(query, tokenizer.language)
            if number == 0:
                first = terms
            looked_up = {term: tokenizer.term_id(term) for term in terms}
            ids = Counter(i for i in map(looked_up.__getitem__, terms) if i is not None)
            weights |= ids  # per id, the larger count
            missing = sum(1 for term_id in looked_up.values() if term_id is None)
            unknown = missing if unknown is None else min(unknown, missing)
        return QueryTerms(first, list(weights.elements()), unknown or 0)

    @property
    def terms_config(self) -> str:
        """Everything that decides a document's chunks and their terms (chunker version, chunk
        size, tokenizer and context configuration): stored terms of another are stale."""
        return ":".join(map(str, self._config))

    def passage_terms(self, doc: SourceDocument) -> PassageTerms:
        """Each chunk's terms exactly as this cache scores them (context, breadcrumb, text),
        without caching anything: for a lexical index kept outside the process."""
        chunks, language, written, prefixes, layout = self._chunked(doc)
        tokenizer = self.tokenizer_for(language)
        texts = _reader_texts(chunks, prefixes)
        terms = [tokenizer.document_terms(text) for text in texts]
        return PassageTerms(language, terms, written, layout)

    def query_term_weights(self, query: str, languages: Iterable[str]) -> Counter[str]:
        """The query's terms under each language's tokenizer, each counted as often as the
        most repeating language has it (as :meth:`query_terms` merges ids)."""
        weights: Counter[str] = Counter()
        for language in dict.fromkeys(languages) or [self.tokenizer.language]:
            weights |= Counter(self.language_query_terms(query, language))
        return weights

    def language_query_terms(self, query: str, language: str) -> list[str]:
        """The query's terms as documents of ``language`` are matched with.

        Under another language than the default one the default language's stopwords and
        question words (``function_words``) are dropped as well: a question in the default language ("what is the catalog number")
        would otherwise match, through "what", "is", "the", the stray passages in that
        language of a document in another (a French paper's English summary), where those
        words are rare and so weigh the most."""
        tokenizer = self.tokenizer_for(language)
        if tokenizer.language == self.tokenizer.language:
            return tokenizer.query_terms(query)
        return tokenizer.query_terms(query, also_stopwords=self.tokenizer.function_words)

    def key(self, ref: DocumentRef | SourceDocument) -> CacheKey:
        return (ref.id, ref.content_hash, *self._config)

    @property
    def nbytes(self) -> int:
        """Estimated bytes held now."""
        return self._nbytes

    def __len__(self) -> int:
        return len(self._entries)

    def missing(self, refs: Iterable[DocumentRef]) -> list[DocumentRef]:
        """The refs whose Markdown must be loaded; marks the others as recently used."""
        absent: list[DocumentRef] = []
        with self._lock:
            for ref in _unique(refs):
                key = self.key(ref)
                if key in self._entries:
                    self._entries.move_to_end(key)
                else:
                    absent.append(ref)
        return absent

    def add(
        self, docs: Iterable[SourceDocument], *, languages: Mapping[str, str] | None = None
    ) -> None:
        """Chunk and tokenise documents and cache them (those already cached are skipped);
        ``languages`` as :meth:`documents` takes it."""
        self.documents((), add=docs, languages=languages)

    def chunks(self, ref: DocumentRef) -> Chunks:
        """A cached document's chunks."""
        return self.chunked_documents([ref])[0].chunks

    def reader_passages(self, ref: DocumentRef) -> list[tuple[str, str]]:
        """``(key, text)`` of a cached document's chunks as the reranker reads them, e.g. to
        warm a reranker's cache (:meth:`IndexedDocument.reader_passage`)."""
        return _reader_passages(self.chunked_documents([ref])[0])

    def in_other_language(self, document: CachedDocument) -> bool:
        """Whether ``document`` is written in another language than the default one: the
        documents whose passages a multilingual model reads
        (:mod:`retrieval.rerankers.cross_lingual`)."""
        return document.written_in != self.tokenizer.language

    def other_language_passages(self, ref: DocumentRef) -> list[tuple[str, str]]:
        """:meth:`reader_passages` of a cached document :meth:`in_other_language`, else none."""
        document = self.chunked_documents([ref])[0]
        return _reader_passages(document) if self.in_other_language(document) else []

    def documents(
        self,
        refs: Sequence[DocumentRef],
        *,
        add: Iterable[SourceDocument] = (),
        languages: Mapping[str, str] | None = None,
    ) -> list[IndexedDocument]:
        """Add ``add``, then return the entries of ``refs`` (duplicates dropped) in order.

        Adding and looking up happen under one lock, so the result holds every
        ref even if the cache then evicts some of them to stay within bounds.
        A cached entry that is only chunked is made whole (and cached so).

        ``languages`` (document id → language) is what :meth:`written_language` said of a
        document's text before, e.g. stored with its :meth:`passage_terms`: detecting it is
        over a third of chunking a document, so a language given here for a document being
        added is taken as it is (when this cache detects languages and could have said that
        one), and the document is stemmed as :meth:`document_language` would.
        """
        found = self._documents(refs, add, languages, whole=True)
        return [entry for entry in found if isinstance(entry, IndexedDocument)]

    def chunked_documents(
        self,
        refs: Sequence[DocumentRef],
        *,
        add: Iterable[SourceDocument] = (),
        languages: Mapping[str, str] | None = None,
    ) -> list[CachedDocument]:
        """As :meth:`documents`, but a document added is only chunked (:class:`ChunkedDocument`)
        and a cached entry is returned as it is, whole or not: for a search that scores no
        passage itself."""
        return self._documents(refs, add, languages, whole=False)

    def whole(self, document: CachedDocument) -> IndexedDocument:
        """``document`` whole: its term matrix built from its own chunks, and cached so."""
        if isinstance(document, IndexedDocument):
            return document
        entry = self._indexed(
            document.ref,
            document.chunks,
            document.language,
            document.reader_prefixes,
            document.written_in,
        )
        found, _, _ = self._insert_and_find({self.key(document.ref): entry}, [document.ref], True)
        (cached,) = found
        assert isinstance(cached, IndexedDocument)  # found whole: one was just cached
        return cached

    def searched_terms(self, documents: Sequence[IndexedDocument]) -> Searched:
        """The term matrices of ``documents`` to score a search with: merged into one
        (:func:`~retrieval.shortlist.merge_term_matrices`) from the second search of exactly
        these documents on, so that a query term costs one slice rather than a look-up in each
        document. The first search of a run gets them apart: merging takes longer than one
        such search, and a project whose documents change between searches would pay it every
        time. The same scores either way. Merged runs count towards ``max_bytes`` and go
        first when it is exceeded; a run too large for :data:`MERGED_SHARE` of it is always
        apart."""
        key = tuple([(doc.ref.id, doc.ref.content_hash) for doc in documents])
        with self._lock:
            merged = self._merged.get(key)
            if merged is not None:
                self._merged.move_to_end(key)
                return merged
        apart = [doc.terms for doc in documents]
        if sum(matrix.nbytes for matrix in apart) > self.max_bytes * MERGED_SHARE:
            return apart
        seen = hash(key)
        with self._lock:
            if seen not in self._searched_once:
                self._searched_once[seen] = None
                while len(self._searched_once) > SEARCHED_ONCE_REMEMBERED:
                    self._searched_once.popitem(last=False)
                return apart
        merged = merge_term_matrices(apart)
        with self._lock:
            self._searched_once.pop(seen, None)
            if key not in self._merged:
                self._merged[key] = merged
                self._nbytes += merged.nbytes
                self._drop_merged(keep=MERGED_SETS)
                self._evict()
        return merged

    def _drop_merged(self, keep: int) -> None:
        """Forget the least recently searched merged runs beyond ``keep`` (lock held)."""
        while len(self._merged) > keep:
            _, dropped = self._merged.popitem(last=False)
            self._nbytes -= dropped.nbytes

    def _documents(
        self,
        refs: Sequence[DocumentRef],
        add: Iterable[SourceDocument],
        languages: Mapping[str, str] | None,
        *,
        whole: bool,
    ) -> list[CachedDocument]:
        provided: dict[CacheKey, SourceDocument] = {}
        for doc in add:
            provided.setdefault(self.key(doc), doc)
        fresh: dict[CacheKey, CachedDocument] = {}
        unbuilt = [key for key in provided if key not in self._entries]
        while True:
            for key in unbuilt:
                doc = provided[key]
                fresh[key] = self._build(doc, self._known_language(languages, doc.id), whole)
            found, absent, partial = self._insert_and_find(fresh, _unique(refs), whole)
            for entry in partial:  # chunked only: made whole from its own chunks
                fresh[self.key(entry.ref)] = self._indexed(
                    entry.ref, entry.chunks, entry.language, entry.reader_prefixes, entry.written_in
                )
            # A provided document seen as cached may have been evicted since: build it now.
            unbuilt = [self.key(ref) for ref in absent if self.key(ref) in provided]
            if not unbuilt and not partial:
                break
        if absent:
            raise DocumentNotIndexed(ref.id for ref in absent)
        return found

    def _insert_and_find(
        self, fresh: dict[CacheKey, CachedDocument], refs: list[DocumentRef], whole: bool
    ) -> tuple[list[CachedDocument], list[DocumentRef], list[ChunkedDocument]]:
        """Cache ``fresh`` (a whole entry replaces a chunked one), then look ``refs`` up: those
        found, those absent, and (``whole``) those found only chunked."""
        found: list[CachedDocument] = []
        absent: list[DocumentRef] = []
        partial: list[ChunkedDocument] = []
        with self._lock:
            for key, entry in fresh.items():
                cached = self._entries.get(key)
                if cached is None or (
                    isinstance(cached, ChunkedDocument) and isinstance(entry, IndexedDocument)
                ):
                    self._entries[key] = entry
                    self._nbytes += entry.nbytes - (cached.nbytes if cached else 0)
            for ref in refs:
                key = self.key(ref)
                cached = self._entries.get(key) or fresh.get(key)
                if cached is None:
                    absent.append(ref)
                    continue
                if key in self._entries:
                    self._entries.move_to_end(key)
                if whole and isinstance(cached, ChunkedDocument):
                    partial.append(cached)
                    continue
                found.append(cached if cached.ref == ref else cached._replace(ref=ref))
            self._evict()
        return found, absent, partial

    def clear(self) -> None:
        with self._lock:
            self.evictions += len(self._entries)
            self._entries.clear()
            self._merged.clear()
            self._searched_once.clear()
            self._nbytes = 0

    def _known_language(self, languages: Mapping[str, str] | None, document_id: str) -> str | None:
        """The written language ``languages`` gives the document, if it is one this cache
        could have detected (``None``: detect it)."""
        if not languages or not self.detects_language:
            return None
        language = languages.get(document_id)
        if language == self.tokenizer.language or language in _DETECTABLE:
            return language
        return None

    def _chunked(
        self, doc: SourceDocument, written: str | None = None
    ) -> tuple[Chunks, str, str, tuple[str, ...], tuple[PassageBounds, ...]]:
        """A document's chunks, stemming language, written language (detected unless given),
        per-chunk context prefixes and the chunks' layout: the document's own, where it came
        with one that fits it, else worked out."""
        layout = doc.layout
        try:
            laid = None if layout is None else chunks_from_layout(doc.id, doc.markdown, layout)
        except ValueError:  # not this text's layout: chunk it
            laid = None
        if laid is None or layout is None:
            layout = self.chunk_layout(doc.markdown)
            laid = chunks_from_layout(doc.id, doc.markdown, layout)
        chunks = Chunks(doc.id, laid)
        written = written or self.written_language(doc.markdown)
        language = self._stemmed(written)
        prefixes = context_prefixes(document_context(doc.name, doc.markdown), chunks.headings)
        return chunks, language, written, prefixes, layout

    def _build(
        self, doc: SourceDocument, written: str | None = None, whole: bool = True
    ) -> CachedDocument:
        chunks, language, written, prefixes, _ = self._chunked(doc, written)
        if whole:
            return self._indexed(doc.ref, chunks, language, prefixes, written)
        return self._chunked_only(doc.ref, chunks, language, prefixes, written)

    def _chunked_only(
        self,
        ref: DocumentRef,
        chunks: Chunks,
        language: str,
        prefixes: tuple[str, ...],
        written: str,
    ) -> ChunkedDocument:
        nbytes = _chunks_nbytes(chunks, prefixes) + _NOISE_BYTES * len(chunks)
        return ChunkedDocument(
            ref, chunks, nbytes, language, prefixes, _reader_keys(chunks, prefixes),
            PassageNoise(self.tokenizer_for(language), chunks, prefixes), written,
        )  # fmt: skip

    def _indexed(
        self,
        ref: DocumentRef,
        chunks: Chunks,
        language: str,
        prefixes: tuple[str, ...],
        written: str,
    ) -> IndexedDocument:
        tokenizer = self.tokenizer_for(language)
        terms = build_term_matrix(tokenizer.documents_term_ids(_reader_texts(chunks, prefixes)))
        density = tuple(map(citation_density, chunks.texts, chunks.headings))
        counted: dict[str, int] = {}
        for text in (*prefixes, *chunks.headings):
            if text not in counted:
                counted[text] = len(tokenizer.document_terms(text)) if text else 0
        content = tuple(
            max(0, int(length) - counted[prefix] - counted[heading])
            for length, prefix, heading in zip(
                terms.lengths, prefixes, chunks.headings, strict=True
            )
        )
        nbytes = terms.nbytes + _chunks_nbytes(chunks, prefixes) + 8 * len(chunks)
        return IndexedDocument(
            ref, chunks, terms, nbytes, language, density, prefixes,
            _reader_keys(chunks, prefixes), content, written,
        )  # fmt: skip

    def _evict(self) -> None:
        """Drop merged runs, then least recently used entries, until within ``max_bytes``
        (lock held)."""
        while self._merged and self._nbytes > self.max_bytes:
            self._drop_merged(keep=len(self._merged) - 1)
        while self._entries and self._nbytes > self.max_bytes:
            _, entry = self._entries.popitem(last=False)
            self._nbytes -= entry.nbytes
            self.evictions += 1


_NOISE_BYTES = 400
"""A chunked entry's noise figures of one passage once worked out: the slots of its density,
its terms and its heading's and context's lengths, with their numbers, roughly (counted up
front, so the entry never outgrows its estimate)."""


def _reader_passages(document: CachedDocument) -> list[tuple[str, str]]:
    return [document.reader_passage(ordinal) for ordinal in range(len(document.chunks))]


def _reader_texts(chunks: Chunks, prefixes: Sequence[str]) -> list[str]:
    """Per chunk, what BM25 and the reranker read (:meth:`IndexedDocument.reader_text`)."""
    return [prefix + chunks.passage(ordinal) for ordinal, prefix in enumerate(prefixes)]


def _reader_keys(chunks: Chunks, prefixes: Sequence[str]) -> tuple[str, ...]:
    """Per chunk, :attr:`IndexedDocument.reader_keys`."""
    return tuple(
        hashlib.sha256((prefix + chunks.passage(ordinal)).encode()).hexdigest() if prefix else key
        for ordinal, (prefix, key) in enumerate(zip(prefixes, chunks.keys, strict=True))
    )


def _chunks_nbytes(chunks: Chunks, prefixes: Sequence[str]) -> int:
    """Estimated bytes of an entry's chunks and context prefixes (its terms aside)."""
    return (
        sum(map(sys.getsizeof, chunks.texts))
        + sum(map(sys.getsizeof, set(chunks.headings)))
        + _CHUNK_OVERHEAD_BYTES * len(chunks)
        + 8 * len(chunks)
        + sum(113 for prefix in prefixes if prefix)  # reader keys, slots
    )


def _unique(refs: Iterable[DocumentRef]) -> list[DocumentRef]:
    seen: set[tuple[str, str]] = set()
    unique: list[DocumentRef] = []
    for ref in refs:
        if (ref.id, ref.content_hash) not in seen:
            seen.add((ref.id, ref.content_hash))
            unique.append(ref)
    return unique
