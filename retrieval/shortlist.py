"""BM25 over cached per-document term matrices, computed at query time.

There is no persistent index: each document's chunks are kept as a small
term-by-chunk matrix (:class:`TermMatrix`), and a query scores only the
postings of its own terms across the searched documents. Document frequency is
summed over those documents and the average length taken over their chunks,
so scores equal a BM25 index built over exactly the searched chunks.

Scoring is Lucene's BM25 as named by Kamphuis, de Vries, Boytsov and Lin,
"Which BM25 Do You Mean? A Large-Scale Reproducibility Study of Scoring
Variants" (ECIR 2020), and as bm25s implements it (``bm25s/scoring.py``,
``_score_idf_lucene`` and ``_score_tfc_lucene``)::

    idf(t)      = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))
    tfc(t, d)   = tf / (tf + k1 * (1 - b + b * |d| / avgdl))
    score(q, d) = sum over query terms t (repeats counted) of idf(t) * tfc(t, d)

Like bm25s, the constant factor ``k1 + 1`` of the textbook numerator is left
out: it does not change the order.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from retrieval.types import Shortlist, ShortlistEntry

DEFAULT_K1 = 1.5
DEFAULT_B = 0.75
DEFAULT_KEEP = 100
DEFAULT_MAX_CANDIDATES = 200

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


class TermMatrix(NamedTuple):
    """One document's chunks as term postings, grouped by term (compressed sparse columns)."""

    vocabulary: dict[int, int]
    """term id -> its postings' span in ``postings``, packed as ``start << 32 | end``; in
    ascending term id, the spans one after another (:func:`merge_term_matrices` reads them so)."""
    postings: npt.NDArray[np.int32]
    """Shape ``(2, P)``: chunk ordinals (ascending within a term), then term frequencies."""
    lengths: npt.NDArray[np.int32]
    """Number of terms in each chunk."""
    chunk_count: int

    @property
    def nbytes(self) -> int:
        """Rough memory footprint, for the cache's byte budget."""
        # A dict slot plus two int objects per vocabulary entry.
        return self.postings.nbytes + self.lengths.nbytes + 224 + 100 * len(self.vocabulary)

    def span(self, term_id: int) -> tuple[int, int] | None:
        """Where the term's postings are in ``postings``, if it occurs."""
        packed = self.vocabulary.get(term_id)
        return None if packed is None else (packed >> 32, packed & _LOW_32_BITS)


_LOW_32_BITS = (1 << 32) - 1


def build_term_matrix(chunk_term_ids: Sequence[Sequence[int]]) -> TermMatrix:
    """Postings of each chunk's term ids (one list per chunk, in chunk order)."""
    chunk_count = len(chunk_term_ids)
    lengths = np.fromiter(map(len, chunk_term_ids), np.int32, chunk_count)
    flat = np.fromiter(chain.from_iterable(chunk_term_ids), np.int64, int(lengths.sum()))
    terms, column_of = np.unique(flat, return_inverse=True)
    owner = np.repeat(np.arange(chunk_count, dtype=np.int64), lengths)
    stride = max(chunk_count, 1)
    keys = column_of.astype(np.int64) * stride + owner  # term-major (term, chunk) pairs
    if len(terms) * stride <= max(8 * len(flat), 1 << 16):
        counted = np.bincount(keys)  # dense enough: count without sorting
        pairs = np.flatnonzero(counted)
        counts = counted[pairs]
    else:
        pairs, counts = np.unique(keys, return_counts=True)
    indptr = np.zeros(len(terms) + 1, dtype=np.int64)
    np.cumsum(np.bincount(pairs // stride, minlength=len(terms)), out=indptr[1:])
    packed = (indptr[:-1] << 32) | indptr[1:]
    postings = np.empty((2, len(pairs)), dtype=np.int32)
    postings[0] = pairs % stride
    postings[1] = counts
    vocabulary = dict(zip(terms.tolist(), packed.tolist(), strict=True))
    return TermMatrix(vocabulary, postings, lengths, chunk_count)


def lucene_idf(document_frequency: int, chunk_count: int) -> float:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))``: Lucene's always-positive BM25 idf."""
    return float(np.log1p((chunk_count - document_frequency + 0.5) / (document_frequency + 0.5)))


def lucene_tfc(
    frequencies: FloatArray, lengths: FloatArray, average_length: float, *, k1: float, b: float
) -> FloatArray:
    """``tf / (tf + k1 * (1 - b + b * |d| / avgdl))``: Lucene's BM25 term-frequency part."""
    return frequencies / (frequencies + k1 * (1 - b + b * lengths / average_length))


def bm25_scores(
    query_term_ids: Sequence[int],
    documents: Searched,
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> FloatArray:
    """BM25 of every chunk of ``documents`` (concatenated in order) for the query's term ids.

    The statistics (chunk count, document frequency, average length) are those
    of exactly these documents' chunks. Only the query terms' postings are read.
    """
    return _scores(query_term_ids, _merged(documents, query_term_ids), k1=k1, b=b)[0]


def term_coverage(
    query_term_ids: Sequence[int],
    documents: Searched,
    *,
    unknown_terms: int = 0,
) -> FloatArray:
    """Per chunk, the IDF-weighted share of the query's distinct terms it contains, in [0, 1].

    ``sum(idf(t) for t in q if t in chunk) / sum(idf(t) for t in q)`` over the
    distinct query terms: coordination-level matching (Salton & McGill,
    *Introduction to Modern Information Retrieval*, 1983, ch. 3) weighted by
    Lucene's idf over exactly ``documents``' chunks. ``unknown_terms`` counts
    distinct query terms no passage anywhere has; they, like ids absent from
    these documents, weigh the most (df = 0), so a query whose rarest words
    occur nowhere covers little of itself anywhere. Unlike BM25 the value does
    not grow with the query's length, so it means the same for every query.
    """
    merged = _merged(documents, query_term_ids)
    return _scores(query_term_ids, merged, unknown_terms=unknown_terms)[1]


class MergedTerms(NamedTuple):
    """The term matrices of a run of documents as one, chunks numbered across them: what a
    search over the same documents scores again and again (each query term's postings are
    then one slice, not a look-up in every document's vocabulary). Built whole by
    :func:`merge_term_matrices`, or for a query's terms alone."""

    vocabulary: dict[int, int]
    """term id -> its postings' span in ``postings``, packed as in :class:`TermMatrix`."""
    postings: npt.NDArray[np.int32]
    """Shape ``(2, P)``: chunk positions across the documents (ascending within a term),
    then term frequencies."""
    lengths: FloatArray
    """Number of terms in each chunk, across the documents."""
    offsets: tuple[int, ...]
    """Where each document's chunks start, then the total."""
    tfc: FloatArray | None = None
    """Each posting's :func:`lucene_tfc` at :data:`DEFAULT_K1` and :data:`DEFAULT_B` (a whole
    merge's: its statistics are fixed), so a query only sums."""

    @property
    def chunk_count(self) -> int:
        return self.offsets[-1]

    @property
    def nbytes(self) -> int:
        """Rough memory footprint, for the cache's byte budget."""
        return (
            self.postings.nbytes + self.lengths.nbytes + 8 * len(self.offsets)
            + 100 * len(self.vocabulary) + (0 if self.tfc is None else self.tfc.nbytes)
        )  # fmt: skip


Searched = Sequence[TermMatrix] | MergedTerms
"""The searched documents' terms: each document's matrix, or all of them merged."""


def merge_term_matrices(
    documents: Sequence[TermMatrix], terms: Iterable[int] | None = None
) -> MergedTerms:
    """``documents`` as one matrix: every term's postings, or only those of ``terms`` (a
    query's, read from each document's vocabulary: cheaper than merging whole for one
    search)."""
    offsets = tuple(_offsets(documents))
    lengths = (
        np.concatenate([matrix.lengths for matrix in documents]).astype(np.float64)
        if documents
        else np.zeros(0, dtype=np.float64)
    )
    if terms is None:
        return _merged_whole(documents, offsets, lengths)
    vocabulary: dict[int, int] = {}
    blocks: list[npt.NDArray[np.int32]] = []
    end = 0
    for term in dict.fromkeys(terms):
        start = end
        for offset, matrix in zip(offsets, documents, strict=False):
            packed = matrix.vocabulary.get(term)
            if packed is not None:
                block = matrix.postings[:, packed >> 32 : packed & _LOW_32_BITS]
                blocks.append(block + np.array([[offset], [0]], dtype=np.int32))
                end += block.shape[1]
        if end > start:
            vocabulary[term] = (start << 32) | end
    postings = np.concatenate(blocks, axis=1) if blocks else np.zeros((2, 0), dtype=np.int32)
    return MergedTerms(vocabulary, postings, lengths, offsets)


def _merged_whole(
    documents: Sequence[TermMatrix], offsets: tuple[int, ...], lengths: FloatArray
) -> MergedTerms:
    if not documents or not any(matrix.vocabulary for matrix in documents):
        return MergedTerms({}, np.zeros((2, 0), dtype=np.int32), lengths, offsets)
    term_of, chunk_of, frequency = [], [], []
    for offset, matrix in zip(offsets, documents, strict=False):
        if not matrix.vocabulary:
            continue
        packed = np.fromiter(matrix.vocabulary.values(), np.int64, len(matrix.vocabulary))
        ids = np.fromiter(matrix.vocabulary.keys(), np.int64, len(matrix.vocabulary))
        term_of.append(np.repeat(ids, (packed & _LOW_32_BITS) - (packed >> 32)))
        chunk_of.append(matrix.postings[0] + offset)
        frequency.append(matrix.postings[1])
    terms = np.concatenate(term_of)
    by_term = np.argsort(terms, kind="stable")  # document order, then chunk order, kept
    terms = terms[by_term]
    postings = np.empty((2, len(terms)), dtype=np.int32)
    postings[0] = np.concatenate(chunk_of)[by_term]
    postings[1] = np.concatenate(frequency)[by_term]
    first = np.flatnonzero(np.concatenate(([True], terms[1:] != terms[:-1])))
    ends = np.append(first[1:], len(terms))
    packed_spans = (first.astype(np.int64) << 32) | ends
    vocabulary = dict(zip(terms[first].tolist(), packed_spans.tolist(), strict=True))
    tfc = lucene_tfc(
        postings[1].astype(np.float64),
        lengths[postings[0]],
        float(lengths.mean()),
        k1=DEFAULT_K1,
        b=DEFAULT_B,
    )
    return MergedTerms(vocabulary, postings, lengths, offsets, tfc)


def _merged(documents: Searched, query_term_ids: Iterable[int]) -> MergedTerms:
    """``documents`` merged, for the query's terms alone when they are not already."""
    if isinstance(documents, MergedTerms):
        return documents
    return merge_term_matrices(documents, query_term_ids)


def _scores(
    query_term_ids: Sequence[int],
    merged: MergedTerms,
    *,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    unknown_terms: int = 0,
) -> tuple[FloatArray, FloatArray]:
    """BM25 and term coverage of every chunk, from one pass over the query terms' postings."""
    weights = Counter(query_term_ids)
    total = merged.chunk_count
    scores = np.zeros(total, dtype=np.float64)
    covered = np.zeros(total, dtype=np.float64)
    if total == 0:
        return scores, covered
    whole = unknown_terms * lucene_idf(0, total)
    lengths = merged.lengths
    average_length = float(lengths.mean())
    known_tfc = merged.tfc if (k1, b) == (DEFAULT_K1, DEFAULT_B) else None
    for term, weight in weights.items():
        packed = merged.vocabulary.get(term)
        if packed is None:
            whole += lucene_idf(0, total)
            continue
        first, last = packed >> 32, packed & _LOW_32_BITS
        chunks = merged.postings[0, first:last]
        if known_tfc is None:
            tf = merged.postings[1, first:last].astype(np.float64)
            tfc = lucene_tfc(tf, lengths[chunks], average_length, k1=k1, b=b)
        else:
            tfc = known_tfc[first:last]
        idf = lucene_idf(len(chunks), total)
        whole += idf
        covered[chunks] += idf
        scores[chunks] += weight * idf * tfc
    if whole > 0:
        covered /= whole
    return scores, covered


def shortlist(
    query_term_ids: Sequence[int],
    documents: Searched,
    *,
    keep: int = DEFAULT_KEEP,
    max_candidates: int = DEFAULT_MAX_CANDIDATES,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    unknown_terms: int = 0,
) -> Shortlist:
    """The best ``min(keep, max_candidates)`` chunks by BM25, best first, with their coverage.

    Each entry carries its :func:`term_coverage` (``unknown_terms`` as there).

    Chunks no query term occurs in are left out, except when BM25 cannot
    discriminate: with no more chunks than ``keep`` every chunk is returned
    (``exhaustive``), and when no query term occurs anywhere the first
    ``max_candidates`` chunks are returned in document order
    (``no_term_matched``). Ties keep document, then chunk, order.
    """
    merged = _merged(documents, query_term_ids)
    offsets = merged.offsets
    scores, coverage = _scores(query_term_ids, merged, k1=k1, b=b, unknown_terms=unknown_terms)
    total = len(scores)
    limit = min(keep, max_candidates)
    matched = np.flatnonzero(scores > 0)
    if total <= limit:
        chosen = _best_first(np.arange(total), scores)
    elif len(matched) == 0:
        chosen = np.arange(min(total, max_candidates))
    else:
        chosen = _best_first(_top(matched, scores, limit), scores)
    documents_of = np.searchsorted(offsets, chosen, side="right") - 1
    entries = [
        ShortlistEntry(document, position - offsets[document], score, covered)
        for document, position, score, covered in zip(
            documents_of.tolist(),
            chosen.tolist(),
            scores[chosen].tolist(),
            coverage[chosen].tolist(),
            strict=True,
        )
    ]
    return Shortlist(
        entries=entries,
        total=total,
        exhaustive=len(entries) == total,
        no_term_matched=total > 0 and len(matched) == 0,
    )


def _offsets(documents: Sequence[TermMatrix]) -> list[int]:
    """Where each document's chunks start in the concatenation, then the total."""
    offsets = [0]
    for matrix in documents:
        offsets.append(offsets[-1] + matrix.chunk_count)
    return offsets


def _top(candidates: IntArray, scores: FloatArray, limit: int) -> IntArray:
    """The ``limit`` best of ``candidates`` (ascending positions); ties go to earlier ones."""
    if len(candidates) <= limit:
        return candidates
    candidate_scores = scores[candidates]
    threshold = np.partition(candidate_scores, len(candidates) - limit)[len(candidates) - limit]
    above = candidates[candidate_scores > threshold]
    tied = candidates[candidate_scores == threshold][: limit - len(above)]
    return np.concatenate((above, tied))


def _best_first(positions: IntArray, scores: FloatArray) -> IntArray:
    """``positions`` by descending score, ties in position order."""
    return positions[np.lexsort((positions, -scores[positions]))]
