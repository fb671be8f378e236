"""Value types shared by the retrieval pipeline and its rerankers.

This module is the contract between ``retrieval/`` and its callers: the
service hands in :class:`SourceDocument` values and gets :class:`SearchResult`
values back; a reranker sees :class:`Candidate` values and answers with a
:class:`RerankResult`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from types import MappingProxyType
from typing import Literal, NamedTuple, overload

from retrieval.relevance import RelevanceLabel, relevance_label


class Candidate(NamedTuple):
    """One shortlisted passage as a reranker sees it."""

    key: str
    """Stable cache key of the passage text (sha256 hex of ``text``)."""
    text: str
    """The passage as the reranker should read it: its document's title and informative
    file name where the breadcrumb does not show them, the heading breadcrumb, then the
    body (:func:`retrieval.context.in_context`, the text BM25 reads too)."""
    bm25: float
    """The passage's BM25 score for the query."""
    coverage: float = 0.0
    """IDF-weighted share of the query's distinct terms the passage contains, in [0, 1]
    (:func:`retrieval.shortlist.term_coverage`): comparable across queries, unlike ``bm25``."""


class CrossLingualMatch(NamedTuple):
    """A passage written in another language than the query's, and how close a multilingual
    model puts it (:mod:`retrieval.rerankers.cross_lingual`)."""

    position: int
    """Its place among the passage keys the reranker was given."""
    cosine: float
    margin: float
    """Its cosine less the median cosine of every such passage searched: how far it stands
    out (the model's raw cosines sit in a narrow band that moves with the question)."""


class AcrossLanguages(NamedTuple):
    """What a reranker's multilingual model adds to a search: the passages it found in other
    languages than the query's, best first, and the place in the results they go to."""

    matches: tuple[CrossLingualMatch, ...] = ()
    """Best first; those under :attr:`margin` join a result only when nothing else is evidence."""
    place: int = 2
    unsearched: int = 0
    """Passages it was given that it could not compare yet (no vector: still warming)."""
    margin: float = 0.0
    """The margin (:attr:`CrossLingualMatch.margin`) a match needs to join a result in which
    something found in the question's language is evidence."""


class RerankResult(NamedTuple):
    """What a reranker answers. A reranker never raises: failures are values."""

    scores: list[float]
    """One score per candidate, in candidate order; higher is better. This is the final order."""
    reranked: bool
    """True when a model's scores shaped ``scores``; False means BM25 order."""
    unscored: tuple[int, ...] = ()
    """Indices of candidates the model did not score (deadline passed, cold cache)."""
    warnings: tuple[str, ...] = ()
    """Human-readable notes naming what went wrong, e.g. ``"cohere: HTTP 429, gave up after 2 retries"``."""
    relevance: tuple[float, ...] = ()
    """Absolute relevance per candidate in [0, 1], meaning the same for every query
    (:mod:`retrieval.relevance`); empty when the reranker has none of its own, and the
    pipeline then uses the lexical estimate."""
    bm25_anchor: int = 0
    """When above 0, the passage BM25 alone would show first is kept within this many first
    places (a fusion that must never lose BM25's best answer: the local reranker's); 0 lets
    the scores alone decide (a cross-encoder's)."""


class Chunk(NamedTuple):
    """A passage of one document: a slice of its Markdown along block boundaries."""

    id: str
    """``"{document_id}:{ordinal}"``: stable for the same Markdown and chunker version."""
    document_id: str
    ordinal: int
    """0-based position of the chunk in its document."""
    text: str
    """The Markdown of ``[start, end)`` minus page markers; continued tables repeat the header."""
    heading: str
    """Heading breadcrumb, e.g. ``"Results > Table 2"``; empty before the first heading."""
    start: int
    """Offset of the first character in the document Markdown."""
    end: int
    """Offset one past the last character in the document Markdown."""
    pages: tuple[int, int]
    """First and last 1-based page the chunk touches."""
    key: str
    """sha256 hex of :attr:`passage`: the passage's identity (exact copies, look-alike
    documents). The reranker reads it in its document's context, under
    :attr:`IndexedDocument.reader_keys <retrieval.index.IndexedDocument.reader_keys>`."""

    @property
    def passage(self) -> str:
        """The breadcrumb, a blank line, then the text (BM25 and the reranker read it after
        the document's context: :func:`retrieval.context.in_context`)."""
        return passage_text(self.heading, self.text)


class Chunks(Sequence[Chunk]):
    """One document's chunks, held column by column, each :class:`Chunk` made when asked for.

    Why not a tuple of chunks: the search cache holds tens of thousands of documents, and
    CPython's garbage collector walks every container it tracks at each full collection,
    holding every search meanwhile. A ``NamedTuple`` is never untracked, so a cached passage
    was one more object to walk; plain tuples of strings and integers are untracked after
    their first collection, so a document's chunks held here cost the collector one object.
    With the service's start-up frozen (:mod:`service.heap`), a full collection of a full
    cache (512 MB of chunked documents) walked 378,881 objects in 268 ms with tuples of chunks
    and 144,523 in 89 ms with these (``bench/gc_pauses.py``). The same strings are held (a
    repeated heading once), and the ids are made on access."""

    __slots__ = ("_bounds", "document_id", "headings", "keys", "texts")

    def __init__(self, document_id: str, chunks: Iterable[Chunk] = ()) -> None:
        """The chunks of ``document_id``, in order (each chunk's ordinal its place)."""
        shared: dict[str, str] = {}
        texts: list[str] = []
        headings: list[str] = []
        keys: list[str] = []
        bounds: list[int] = []
        for ordinal, chunk in enumerate(chunks):
            if chunk.document_id != document_id or chunk.ordinal != ordinal:
                raise ValueError(f"chunk {chunk.id!r} is not {document_id}:{ordinal}")
            texts.append(chunk.text)
            headings.append(shared.setdefault(chunk.heading, chunk.heading))
            keys.append(chunk.key)
            bounds.extend((chunk.start, chunk.end, *chunk.pages))
        self.document_id = document_id
        self.texts: tuple[str, ...] = tuple(texts)
        """Each chunk's :attr:`Chunk.text`, in order."""
        self.headings: tuple[str, ...] = tuple(headings)
        """Each chunk's :attr:`Chunk.heading`, in order."""
        self.keys: tuple[str, ...] = tuple(keys)
        """Each chunk's :attr:`Chunk.key`, in order."""
        self._bounds = tuple(bounds)
        """Per chunk: start, end, first page, last page."""

    def __len__(self) -> int:
        return len(self.texts)

    @overload
    def __getitem__(self, index: int) -> Chunk: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[Chunk, ...]: ...

    def __getitem__(self, index: int | slice) -> Chunk | tuple[Chunk, ...]:
        if isinstance(index, slice):
            return tuple(self._chunk(i) for i in range(*index.indices(len(self))))
        ordinal = index + len(self.texts) if index < 0 else index
        if ordinal < 0:
            raise IndexError("chunk index out of range")
        return self._chunk(ordinal)  # past the end, the columns raise IndexError

    def __iter__(self) -> Iterator[Chunk]:
        return map(self._chunk, range(len(self)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Chunks):
            return self.document_id == other.document_id and self._columns() == other._columns()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal by value, not hashed

    def __repr__(self) -> str:
        return f"Chunks({self.document_id!r}, {len(self)} chunks)"

    def passage(self, ordinal: int) -> str:
        """Chunk ``ordinal``'s :attr:`Chunk.passage`, without making the chunk."""
        return passage_text(self.headings[ordinal], self.texts[ordinal])

    def _columns(self) -> tuple[tuple[object, ...], ...]:
        return self.texts, self.headings, self.keys, self._bounds

    def _chunk(self, ordinal: int) -> Chunk:
        """Chunk ``ordinal`` (from 0), made as ``Chunk(...)`` would, without its Python-level
        ``__new__``: a search asks for a few hundred."""
        text, bounds, at = self.texts[ordinal], self._bounds, 4 * ordinal
        document_id = self.document_id
        return _new_tuple(Chunk, (
            f"{document_id}:{ordinal}", document_id, ordinal, text, self.headings[ordinal],
            bounds[at], bounds[at + 1], (bounds[at + 2], bounds[at + 3]), self.keys[ordinal],
        ))  # fmt: skip


_new_tuple = tuple.__new__


def passage_text(heading: str, text: str) -> str:
    """Join a heading breadcrumb and chunk text the way rerankers and BM25 read them."""
    return f"{heading}\n\n{text}" if heading else text


class DocumentRef(NamedTuple):
    """Names one version of a document: a new content hash is a new document to the cache."""

    id: str
    name: str
    content_hash: str


class PassageBounds(NamedTuple):
    """Where one passage of a document lies in its Markdown, as the chunker laid it out
    (:func:`retrieval.chunking.chunk_layout`): all a chunk is but its text and key, which
    :func:`retrieval.chunking.chunks_from_layout` slices and hashes again."""

    start: int
    end: int
    first_page: int
    last_page: int
    heading: str
    """The heading breadcrumb (:attr:`Chunk.heading`)."""
    prefix: str = ""
    """Text placed before the span: a continued table's repeated header rows."""


class SourceDocument(NamedTuple):
    """A document's page-marked Markdown, as the extractor wrote it."""

    id: str
    name: str
    content_hash: str
    markdown: str
    layout: tuple[PassageBounds, ...] | None = None
    """Its chunks' layout under the reading cache's configuration (its
    :attr:`~retrieval.ChunkIndex.terms_config`), where one was stored with its terms: the cache
    then slices the passages rather than chunking the Markdown again. ``None``: chunk it."""

    @property
    def ref(self) -> DocumentRef:
        return DocumentRef(self.id, self.name, self.content_hash)


class ShortlistEntry(NamedTuple):
    """One chunk picked by BM25: where it is among the searched documents, and its score."""

    document: int
    """Position of the chunk's document in the searched document list."""
    ordinal: int
    """The chunk's ordinal within that document."""
    bm25: float
    coverage: float = 0.0
    """IDF-weighted share of the query's distinct terms the chunk contains
    (:func:`retrieval.shortlist.term_coverage`)."""


class PrefilteredPassage(NamedTuple):
    """One passage of a shortlist worked out outside the process, with the same BM25."""

    document_id: str
    ordinal: int
    """The chunk's ordinal within its document (as :func:`retrieval.chunking.chunk_markdown`
    numbers them)."""
    bm25: float
    coverage: float
    length: int | None = None
    """How many terms the passage has as BM25 read it (context, breadcrumb and text), if
    known: the search then need not tokenise it again."""


class Prefiltered(NamedTuple):
    """BM25's shortlist over a whole project, scored where the project's terms are stored
    (the service's lexical prefilter in PostgreSQL): the search then reads only these
    passages' documents."""

    passages: Sequence[PrefilteredPassage]
    """Best first, at most the shortlist's size."""
    total: int
    """How many passages the project holds."""
    term_passages: Mapping[str, Mapping[str, int]] = MappingProxyType({})
    """Per document of ``passages`` (by id), how many of its passages hold each query term it
    has, the query analysed as every searched language reads it: its own idf, which answer
    spans weigh with (:func:`retrieval.answer_spans.term_weights`). A document left out is
    tokenised whole instead."""


class Shortlist(NamedTuple):
    """BM25's pick of candidates for the reranker."""

    entries: list[ShortlistEntry]
    """Best first; ties in document, then chunk, order."""
    total: int
    """How many chunks the searched documents hold."""
    exhaustive: bool
    """True when ``entries`` holds every chunk of the searched documents."""
    no_term_matched: bool
    """True when no query term occurs in any chunk (``entries`` are then in document order)."""


class NearCopy(NamedTuple):
    """A passage folded into a hit because it says nearly the same
    (:mod:`retrieval.near_duplicates`): where it is, so nothing is silently lost."""

    chunk_id: str
    document_id: str
    document_name: str
    pages: tuple[int, int]
    similarity: float
    """Word 3-shingle Jaccard with the hit's text; 1.0 for an identical passage."""

    def to_dict(self) -> dict[str, object]:
        """The REST/MCP shape."""
        return {
            "document": {"id": self.document_id, "name": self.document_name},
            "pages": list(self.pages),
            "chunk_id": self.chunk_id,
            "similarity": self.similarity,
        }


class Hit(NamedTuple):
    """One cited passage of a search result."""

    chunk_id: str
    document_id: str
    document_name: str
    pages: tuple[int, int]
    heading: str
    text: str
    score: float
    """The reranker's score when it reranked, else the BM25 score: for ordering only."""
    bm25: float
    relevance: float = 0.0
    """How well the passage answers the query, in [0, 1], the same scale for every query
    (:mod:`retrieval.relevance`); below :data:`~retrieval.relevance.EVIDENCE_FLOOR` it is
    not evidence."""
    matched_words: tuple[str, ...] = ()
    """Words of ``text`` (casefolded) that match a query term: what a reader sees marked."""
    near_copies: tuple[NearCopy, ...] = ()
    """Lower-ranked passages with nearly the same text (another version of the document, a
    repeated block, a template sibling), folded into this hit instead of shown again."""
    answer_spans: tuple[tuple[int, int], ...] = ()
    """``(start, end)`` offsets into ``text`` of the one or two sentences that best match the
    query (:mod:`retrieval.answer_spans`), in text order; empty when none holds a query term."""

    @property
    def answer_text(self) -> str:
        """The answer spans' sentences joined by a space (``""`` without spans)."""
        return " ".join(self.text[start:end] for start, end in self.answer_spans)

    @property
    def relevance_label(self) -> RelevanceLabel:
        """``"high"``, ``"medium"`` or ``"low"``: :attr:`relevance` in words."""
        return relevance_label(self.relevance)


class Source(NamedTuple):
    """One cited document, listed once per search result."""

    id: str
    name: str
    first_page: int
    """The lowest page any hit of this document cites."""
    pages: tuple[int, ...]
    """Every page a hit of this document starts on, ascending."""
    look_alikes: tuple[DocumentRef, ...] = ()
    """Other searched documents that share most of this one's passages (another version, a
    template sibling): :func:`retrieval.noise.look_alikes`."""


Ranking = Literal["reranked", "partly_ranked", "bm25_order"]
"""How a result was ordered: every candidate scored by the reranker; some of them (the rest
by BM25 alone, while the local model warms); or BM25 order (no reranker, or it failed)."""


class StageSeconds(NamedTuple):
    """Wall-clock seconds one search spent in each stage of the pipeline (for metrics)."""

    chunk: float = 0.0
    """Chunking and tokenising the documents the cache lacked."""
    bm25: float = 0.0
    """Scoring every passage and picking the shortlist."""
    rerank: float = 0.0
    """The reranker's call (a model, or Cohere over the network)."""


class SearchResult(NamedTuple):
    """Ranked, cited passages for one query."""

    hits: list[Hit]
    sources: list[Source]
    """Cited documents in the order they first appear in ``hits``."""
    reranker: str
    reranked: bool
    warnings: tuple[str, ...]
    candidates: int
    """How many passages BM25 handed to the reranker."""
    unscored: int
    """How many of those the reranker did not score."""
    exhaustive: bool
    """True when every passage of the searched documents was a candidate."""
    no_term_matched: bool = False
    """True when no query word occurs in any searched passage (hits are then document order)."""
    insufficient_evidence: bool = True
    """True when no hit's relevance reaches :data:`~retrieval.relevance.EVIDENCE_FLOOR`:
    the documents do not appear to answer the query, and the hits are only the closest
    passages. Always true without hits."""
    stage_seconds: StageSeconds = StageSeconds()
    """Where the search's time went, stage by stage."""

    @property
    def ranking(self) -> Ranking:
        """How the hits were ordered: the one rule every door renders."""
        if not self.reranked:
            return "bm25_order"
        return "partly_ranked" if self.unscored else "reranked"

    @property
    def scored(self) -> int:
        """How many candidates the reranker scored (0 in BM25 order)."""
        return self.candidates - self.unscored if self.reranked else 0

    def to_dict(self) -> dict[str, object]:
        """The REST/MCP shape: plain JSON-ready values."""
        return {
            "results": [
                {
                    "document": {"id": hit.document_id, "name": hit.document_name},
                    "pages": list(hit.pages),
                    "heading": hit.heading,
                    "text": hit.text,
                    "score": hit.score,
                    "relevance": hit.relevance,
                    "relevance_label": hit.relevance_label,
                    "near_copies": [copy.to_dict() for copy in hit.near_copies],
                    "answer_spans": [list(span) for span in hit.answer_spans],
                }
                for hit in self.hits
            ],
            "insufficient_evidence": self.insufficient_evidence,
            "sources": [
                {
                    "id": source.id,
                    "name": source.name,
                    "first_page": source.first_page,
                    "pages": list(source.pages),
                    "look_alikes": [
                        {"id": other.id, "name": other.name} for other in source.look_alikes
                    ],
                }
                for source in self.sources
            ],
            "reranker": self.reranker,
            "reranked": self.reranked,
            "warnings": list(self.warnings),
        }
