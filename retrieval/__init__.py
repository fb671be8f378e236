"""The pure query-time core: chunk, shortlist with BM25, rerank, cite.

No database and no HTTP: the service hands in documents' page-marked Markdown
and gets ranked passages back, each cited to its document and pages.
"""

from __future__ import annotations

from retrieval.chunking import CHUNKER_VERSION, chunk_markdown
from retrieval.errors import (
    DocumentNotIndexed,
    EmptyQuery,
    InvalidQuery,
    InvalidSearchParameter,
    QueryTooLong,
    RetrievalError,
)
from retrieval.index import ChunkIndex, IndexedDocument
from retrieval.pipeline import MAX_QUERY_CHARS, search, validate_query
from retrieval.tokenize import Tokenizer
from retrieval.types import (
    Candidate,
    Chunk,
    Chunks,
    DocumentRef,
    Hit,
    NearCopy,
    PassageBounds,
    Prefiltered,
    PrefilteredPassage,
    RerankResult,
    SearchResult,
    Source,
    SourceDocument,
    StageSeconds,
)

__all__ = [
    "CHUNKER_VERSION",
    "MAX_QUERY_CHARS",
    "Candidate",
    "Chunk",
    "ChunkIndex",
    "Chunks",
    "DocumentNotIndexed",
    "DocumentRef",
    "EmptyQuery",
    "Hit",
    "IndexedDocument",
    "InvalidQuery",
    "InvalidSearchParameter",
    "NearCopy",
    "PassageBounds",
    "Prefiltered",
    "PrefilteredPassage",
    "QueryTooLong",
    "RerankResult",
    "RetrievalError",
    "SearchResult",
    "Source",
    "SourceDocument",
    "StageSeconds",
    "Tokenizer",
    "chunk_markdown",
    "search",
    "validate_query",
]
