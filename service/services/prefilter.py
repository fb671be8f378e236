"""The lexical prefilter (#28): a large project's BM25 shortlist, ranked inside PostgreSQL.

Searching scores every passage of the searched documents, which the process chunks and keeps
in its cache (:class:`~retrieval.ChunkIndex`). That is right for the hundreds of passages a
person uploads; a team's archive of a million passages neither fits the cache nor scores in
time. So each ready document's passages are also stored as BM25 terms (``lexical_documents``,
``lexical_postings``; ``sql/011_lexical_prefilter.sql``): the very chunks and terms the cache
makes (:meth:`ChunkIndex.passage_terms`), one row per (term, passage) with its frequency and
the passage's length. A search of a project of at least ``search.prefilter_min_passages``
passages asks PostgreSQL for the best ``shortlist_keep`` passages by Lucene's BM25 over the
project's own statistics (document frequencies from ``lexical_terms`` and length sums from
``lexical_project_stats``, which triggers keep in the writing transaction; counted from the
postings and summed from ``lexical_documents`` when only some documents are searched), which
is the shortlist the exhaustive path computes, or, for a term in more passages than
:func:`term_depth`, read from its best postings first and rescored exactly; only
those passages' documents are then chunked in the process (sliced, rather, by the chunk layout
stored with their terms: :func:`layout_json`), and reranking and citing run as usual. They are
chunked but not tokenised (:meth:`ChunkIndex.chunked_documents`): the query
hands each passage's length and, per document, how many of its passages hold each query term
(what the answer spans weigh with), so only the shown passages are read word by word.

Why postings and not ``tsvector``: ``ts_rank_cd`` is not BM25 (no idf) and must score every
row an OR query matches; measured on 100,000 passages (``../shared/probes``) it kept 0.80 of
BM25's top 100 at 929 ms p50, where BM25 summed over postings kept all of them at ~170-210 ms.

Kept in sync by the database: the terms are written in the transaction that stores the
document's text (:func:`store_many_terms`, from :func:`service.services.extraction.save_extractions`),
and a trigger drops them in the transaction that changes the text, status or project (delete
cascades); storing them locks the document's row until commit, so a change racing the backfill
waits and then drops them. A stored row is thus only ever of a ready document with that text,
and :func:`stats` counts rows without reading the documents. Documents ready before the prefilter existed, or whose terms were made with another
chunker or tokenizer configuration, are filled in by :func:`backfill_forever` on the worker,
a batch at a time (resumable: it only ever asks which documents still lack current terms).
Until every searched document has current terms the search stays exhaustive, so an answer is
never computed from part of a project.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple
from uuid import UUID

import anyio.to_thread
import psycopg
from psycopg.rows import DictRow

from retrieval import Prefiltered, PrefilteredPassage
from retrieval.index import LANGUAGE_SAMPLE_CHARS
from retrieval.shortlist import DEFAULT_B, DEFAULT_K1, lucene_idf
from retrieval.types import PassageBounds, SourceDocument
from service.storage.db import Connection, connection, execute, fetch_all, fetch_one
from sql import queries

if TYPE_CHECKING:
    from retrieval import ChunkIndex
    from retrieval.index import PassageTerms
    from service.runtime import Runtime

logger = logging.getLogger(__name__)

MAX_TERM_CHARS = 200
"""Longer terms (a run of base64, a hash) are not stored: a btree entry has a size limit, and
no one searches for them. The passage's length still counts them."""
BACKFILL_BATCH = 16
"""Documents read and written per backfill step."""
WRITTEN_LANGUAGE_BATCHES = 16
"""Rows whose written language alone is missing are filled this many backfill batches at a
time (a few hundred microseconds each, against milliseconds for a document's terms)."""
BACKFILL_IDLE_SECONDS = 60.0
"""How long the backfill waits, once nothing is left, before looking again."""
RESCORE_FACTOR = 10
"""A search reading each term's best postings only (:func:`term_depth`) scores this many
times ``limit`` of its best candidates exactly over every query term. Measured on SciFact
claims over 1M passages at a depth of 10,000 (``bench/prefilter_depth.py``; each abstract
there has ~115 near-copies whose scores all but tie, so the exact top 100 is crowded): 5×
kept 0.95 of the exact SQL top 10, 10× 0.985, 15× 0.995 (but 15× end to end cost 100k
passages its p95 target)."""
MAX_READ_TERMS = 63
"""Most deep query terms whose best postings one search reads: the ranking query marks the
terms a candidate was read under with a bit each of a 64-bit integer, and probes it for the
others alone (``lexical_top_passages_by_impact``). A lighter deep term past them (a query of
2,000 characters can have more) is read for no candidate, only probed for each: its part of the
scores is exact all the same, it just takes no part in choosing the candidates."""
WHOLE_READ_PROBES = 2
"""A deep query term is read whole where that adds to its read no more postings than the read
itself holds, nor than this many per candidate rescored (:func:`term_depths`): a posting read
in order costs about half a probe of the primary key for one candidate, and a term read whole
is probed for none (nor sorted, where its read runs past the impact floor). Chosen on the
ranking queries of ``bench/prefilter.py``'s claims (two the least on the plateau of one to
sixteen at 1M passages); on 60 other claims (``bench/prefilter_depth.py --skip 100``) the
query's mean time fell 11-12 % at 100k and 1M passages, and the share of the exact shortlist
kept held or rose (docs/benchmarks.md): a term read whole chooses candidates by its exact
part."""
LIGHTEST_DEPTH_SHARE = 0.1
"""The least share of the depth a deep query term's read covers, however light it is
(:func:`term_depths`)."""
DEPTH_SHARE = 0.01
"""A term's postings read, as a share of the project's passages, where that is more than
``search.prefilter_term_depth``: a fixed depth of 2,000 that keeps the exact top 10 at 100k
passages kept only 0.76 of it at 1M (``bench/prefilter_depth.py``)."""
IMPACT_REFERENCE_LENGTH = 115.0
"""The passage length in terms at which ``lexical_impact`` (``sql/020_lexical_impact.sql``)
orders a term's postings (in double precision since ``sql/024_lexical_impact_floor.sql``):
SciFact's mean at the default chunk size."""
WORK_MEM = "32MB"
"""Memory the ranking query may hash its passages in (``SET LOCAL``): a query of common words
groups tens of thousands, and spilling them to disk at the default 4 MB doubles its time."""


class LexicalStats(NamedTuple):
    """What the stored terms cover of the searched documents."""

    ready: int
    """Searched ready documents."""
    documents: int
    """Searched ready documents whose terms are stored with the current configuration."""
    passages: int
    terms: int
    languages: list[str]


async def store_terms(
    conn: Connection, document: SourceDocument, config: str, terms: PassageTerms
) -> bool:
    """Replace the document's stored terms; ``False`` when it is no longer ready with this
    text (then nothing is stored). Run it in the transaction that stored the text."""
    return document.id in await store_many_terms(conn, config, [(document, terms)])


async def store_many_terms(
    conn: Connection, config: str, documents: Sequence[tuple[SourceDocument, PassageTerms]]
) -> set[str]:
    """Replace these documents' stored terms, in three statements whatever their number (the
    triggers that keep ``lexical_terms`` run once); the ids of those stored, leaving out any
    no longer ready with this text. Run it in the transaction that stored the texts."""
    if not documents:
        return set()
    ids = [UUID(document.id) for document, _ in documents]
    await execute(conn, "forget_lexical_documents", document_ids=ids)
    rows = await fetch_all(
        conn,
        "store_lexical_documents",
        config=config,
        document_ids=ids,
        content_hashes=[document.content_hash for document, _ in documents],
        languages=[terms.language for _, terms in documents],
        written_languages=[terms.written for _, terms in documents],
        passages=[len(terms.terms) for _, terms in documents],
        terms=[sum(map(len, terms.terms)) for _, terms in documents],
        vocabularies=[" ".join(vocabulary(terms)) for _, terms in documents],
        layouts=[layout_json(terms.layout) for _, terms in documents],
    )
    projects = {str(row["document_id"]): str(row["project_id"]) for row in rows}
    text = postings_copy_text(
        (projects[document.id], document.id, terms)
        for document, terms in documents
        if document.id in projects
    )
    if text:
        async with conn.cursor().copy(queries["copy_lexical_postings"]) as copy:
            await copy.write(text)
    return set(projects)


def postings_copy_text(documents: Iterable[tuple[str, str, PassageTerms]]) -> str:
    """The postings of ``(project id, document id, terms)`` in COPY's text format, one line
    per (term, passage), in one piece (a row at a time costs a call per row) and in the
    primary key's order: project, term, document, passage. Each index then takes the rows a
    term at a time, not at random places, a third less work for PostgreSQL (measured on 100k
    rows: 1.5 s against 2.3 s). Lines are grouped by term as they are made, so only the
    distinct terms are sorted, not every line.

    Terms are runs of word characters, so only a backslash could need escaping and none can
    hold a tab or a line break; one that does is escaped all the same."""
    by_project: dict[str, dict[str, list[str]]] = {}
    for project_id, document_id, terms in sorted(documents, key=lambda item: item[:2]):
        by_term = by_project.setdefault(project_id, {})
        for ordinal, words in enumerate(terms.terms):
            ends = f"\t{document_id}\t{ordinal}\t"
            length = f"\t{len(words)}\n"
            for term, tf in Counter(words).items():
                if len(term) <= MAX_TERM_CHARS:
                    line = f"{ends}{tf}{length}"
                    if (lines := by_term.get(term)) is None:
                        by_term[term] = [line]
                    else:
                        lines.append(line)
    parts = []
    for project_id, by_term in sorted(by_project.items()):
        for term in sorted(by_term):
            start = f"{project_id}\t{_escaped(term)}"
            parts.append(start + start.join(by_term[term]))
    return "".join(parts)


def vocabulary(terms: PassageTerms) -> list[str]:
    """The document's distinct stored terms (those of :func:`postings_copy_text`'s lines),
    which its ``lexical_documents`` row lists so that deleting the row finds its postings
    through the primary key (``sql/023_lexical_vocabulary.sql``). They are sent joined by spaces (an
    array of quoted strings took 1 s a batch to send): terms are runs of word characters, and
    one that held a space could not be deleted by its parts, so it is refused."""
    found = list({term for words in terms.terms for term in words if len(term) <= MAX_TERM_CHARS})
    if any(" " in term for term in found):
        raise ValueError("a term holds a space")
    return found


def layout_json(layout: Sequence[PassageBounds] | None) -> str | None:
    """A document's chunk layout as ``lexical_documents.passage_layout`` holds it
    (``sql/026_lexical_passage_layout.sql``): an array per passage,
    ``[start, end, first page, last page, heading, prefix]``; ``None`` (none stored, for the
    backfill to fill in) where it is not known."""
    if layout is None:
        return None
    return json.dumps([list(bounds) for bounds in layout], ensure_ascii=False)


def stored_layout(value: object) -> tuple[PassageBounds, ...] | None:
    """A ``passage_layout`` as read back (:func:`layout_json`'s shape), or ``None`` where the
    row has none or it is not of that shape (then the cache chunks the document)."""
    if not isinstance(value, list):
        return None
    layout = []
    for item in value:
        if not (
            isinstance(item, list)
            and len(item) == len(PassageBounds._fields)
            and all(type(number) is int for number in item[:4])
            and all(isinstance(text, str) for text in item[4:])
        ):
            return None
        layout.append(PassageBounds(*item))
    return tuple(layout)


def _escaped(term: str) -> str:
    if "\\" in term or "\t" in term or "\n" in term or "\r" in term:
        return term.translate(_COPY_ESCAPES)
    return term


_COPY_ESCAPES = str.maketrans({"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"})


async def passage_terms(index: ChunkIndex, document: SourceDocument) -> PassageTerms:
    """The document's passages as terms, worked out off the event loop."""
    return await anyio.to_thread.run_sync(index.passage_terms, document)


async def backfill(runtime: Runtime, *, batch: int = BACKFILL_BATCH) -> int:
    """Store the terms of up to ``batch`` ready documents that lack current ones, or where none
    does, record the written language of stored rows that lack it
    (:func:`fill_written_languages`), or where none does, their chunk layout
    (:func:`fill_passage_layouts`); how many were looked at (0: none is left)."""
    index = runtime.search.index
    config = index.terms_config
    async with connection(runtime.pool) as conn:
        rows = await fetch_all(
            conn, "list_documents_without_lexical_terms", config=config, limit=batch
        )
    for row in rows:
        document = SourceDocument(str(row["id"]), row["name"], row["content_hash"], row["markdown"])
        terms = await passage_terms(index, document)
        async with connection(runtime.pool) as conn, conn.transaction():
            await store_terms(conn, document, config, terms)
    if rows:
        return len(rows)
    filled = await fill_written_languages(runtime, batch=batch * WRITTEN_LANGUAGE_BATCHES)
    return filled or await fill_passage_layouts(runtime, batch=batch)


async def fill_written_languages(runtime: Runtime, *, batch: int) -> int:
    """Record the written language of up to ``batch`` stored documents' rows that lack it
    (written before ``sql/025_lexical_written_language.sql``), detected from the start of their
    text as chunking them would; how many were looked at (0: none is left)."""
    index = runtime.search.index
    return await _fill_in(
        runtime,
        "list_lexical_documents_without_written_language",
        "set_lexical_written_languages",
        "written_languages",
        lambda row: index.written_language(row["start"]),
        limit=batch,
        chars=LANGUAGE_SAMPLE_CHARS,
    )


async def fill_passage_layouts(runtime: Runtime, *, batch: int) -> int:
    """Record the chunk layout of up to ``batch`` stored documents' rows that lack it (written
    before ``sql/026_lexical_passage_layout.sql``), chunking their text as their terms were;
    how many were looked at (0: none is left). A batch is as many documents as the terms'
    backfill reads: each is read whole."""
    index = runtime.search.index
    return await _fill_in(
        runtime,
        "list_lexical_documents_without_layout",
        "set_lexical_passage_layouts",
        "layouts",
        lambda row: layout_json(index.chunk_layout(row["markdown"])),
        limit=batch,
    )


async def _fill_in(
    runtime: Runtime,
    listing: str,
    setting: str,
    values: str,
    work_out: Callable[[DictRow], object],
    *,
    limit: int,
    **listed: object,
) -> int:
    """Fill in one thing a newer schema added to the current stored rows: up to ``limit`` rows
    that the query ``listing`` (given ``listed``) finds without it, each one's worked out off
    the event loop by ``work_out`` and written by the query ``setting`` (as its parameter
    ``values``) where the row is still of that text; how many were looked at (0: none is
    left)."""
    config = runtime.search.index.terms_config
    async with connection(runtime.pool) as conn:
        rows = await fetch_all(conn, listing, config=config, limit=limit, **listed)
    if not rows:
        return 0
    worked_out = await anyio.to_thread.run_sync(lambda: [work_out(row) for row in rows])
    async with connection(runtime.pool) as conn:
        await execute(
            conn,
            setting,
            config=config,
            document_ids=[row["document_id"] for row in rows],
            content_hashes=[row["content_hash"] for row in rows],
            **{values: worked_out},
        )
    return len(rows)


async def backfill_forever(runtime: Runtime) -> None:
    """Fill in missing or stale terms a batch at a time, then look again now and then; runs
    until cancelled, and survives a database outage."""
    while True:
        try:
            done = await backfill(runtime)
        except (psycopg.Error, OSError):
            logger.warning("the lexical backfill could not reach the database; trying later")
            done = 0
        except Exception:  # a document the tokenizer chokes on must not stop the others
            logger.exception("the lexical backfill failed; trying later")
            done = 0
        if done == 0:
            await asyncio.sleep(BACKFILL_IDLE_SECONDS)


def coverage(rows: Sequence[Mapping[str, Any]]) -> LexicalStats:
    """What the stored terms cover of the documents ``rows`` list (one row per searched
    ready document, with ``passages``, ``terms`` and ``language`` of its current stored terms,
    ``None`` where they are missing or stale: ``list_ready_document_refs_with_terms``), as
    :func:`stats` counts it."""
    stored = [row for row in rows if row["passages"] is not None]
    return LexicalStats(
        len(rows),
        len(stored),
        sum(row["passages"] for row in stored),
        sum(row["terms"] for row in stored),
        sorted({row["language"] for row in stored}),
    )


async def stats(
    conn: Connection,
    config: str,
    project_id: UUID,
    document_ids: Sequence[UUID] | None,
    *,
    ready: int | None = None,
) -> LexicalStats:
    """What the stored terms cover of the searched documents, on its own (a large project's
    search; a small one's gets it with its documents' list: :func:`coverage`): for a whole
    project from ``lexical_project_stats``, which a trigger keeps at commit (migration 021),
    with ``ready`` as its count of ready documents where the caller counted them in the
    snapshot this reads in (else they are counted here); for some of its documents summed
    from their ``lexical_documents`` rows."""
    if document_ids:
        row = await fetch_one(
            conn,
            "lexical_stats",
            project_id=project_id,
            config=config,
            document_ids=list(document_ids),
        )
    else:
        row = await fetch_one(
            conn, "lexical_project_stats", project_id=project_id, config=config, ready=ready
        )
    assert row is not None  # an aggregate always has a row
    return LexicalStats(
        row["ready"], row["documents"], row["passages"], row["terms"], list(row["languages"])
    )


def term_depths(
    weights: Sequence[float],
    frequencies: Sequence[int],
    depth: int,
    *,
    rescore: int = 0,
    whole_read: int = WHOLE_READ_PROBES,
) -> list[int | None]:
    """How many of its best postings each query term of these BM25 ``weights`` and passage
    ``frequencies`` has read: ``None`` (every one) for a term in at most ``depth`` passages;
    of the others, the deep ones, the heaviest ``depth`` and a lighter one in proportion to its
    weight (at least :data:`LIGHTEST_DEPTH_SHARE` of ``depth``), for a posting of a term half
    as heavy adds at most half as much to a passage's sum; 0 for a deep term past the
    :data:`MAX_READ_TERMS` heaviest. A deep term read all but whole is read whole, as cheaper
    than probing it for each of the ``rescore`` candidates: where that at most doubles its read
    and adds at most ``whole_read`` postings per candidate (:data:`WHOLE_READ_PROBES`)."""
    deep = [i for i, frequency in enumerate(frequencies) if frequency > depth]
    read = set(sorted(deep, key=lambda i: (-weights[i], i))[:MAX_READ_TERMS])
    heaviest = max((weights[i] for i in deep), default=0)
    least = math.ceil(depth * LIGHTEST_DEPTH_SHARE)
    depths: list[int | None] = [None] * len(weights)
    for i in deep:
        if i not in read:
            depths[i] = 0
            continue
        own = max(least, math.ceil(depth * weights[i] / heaviest))
        past = frequencies[i] - own
        depths[i] = None if past <= min(own, whole_read * rescore) else own
    return depths


def term_depth(minimum: int, passages: int) -> int:
    """How many postings of each query term a search of ``passages`` stored passages reads
    (0: every one): ``minimum`` (``search.prefilter_term_depth``), or :data:`DEPTH_SHARE` of
    the passages where that is more."""
    return 0 if minimum <= 0 else max(minimum, int(passages * DEPTH_SHARE))


async def shortlist(
    conn: Connection,
    index: ChunkIndex,
    project_id: UUID,
    query: str,
    covered: LexicalStats,
    document_ids: Sequence[UUID] | None,
    *,
    limit: int,
    depth: int = 0,
    rescore: int | None = None,
    whole_read: int = WHOLE_READ_PROBES,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
) -> Prefiltered:
    """The best ``limit`` passages of the searched documents for ``query`` by BM25, with
    their term coverage (:func:`retrieval.shortlist.term_coverage`), from the stored terms.

    ``depth`` > 0 (the search passes :func:`term_depth`) reads only the best postings by
    impact of each term in more passages than that, a small share of a common term's: ``depth``
    of the heaviest such term's, fewer of a lighter one's (:func:`term_depths`;
    ``lexical_best_postings``: an index-only scan of ``lexical_postings_impact_idx``, which
    holds the postings at or above the impact floor, and of the rest of the term's only where
    those are fewer), and every posting of the other terms; their partial sums choose
    ``rescore`` candidates (by default :data:`RESCORE_FACTOR` × ``limit``), whose scores are
    completed by a probe for each deep term whose read did not find the candidate (every part
    read is exact already).
    Where every term is in at most ``depth`` passages, or is read all but whole (``whole_read``:
    :func:`term_depths`), the search reads them all (the exact shortlist, and cheaper than
    rescoring), as does a search of some documents (the index is per project)."""
    weights = index.query_term_weights(query, covered.languages)
    total = covered.passages
    if not weights or total == 0:
        return Prefiltered((), total)
    filters = {
        "project_id": project_id,
        "document_ids": list(document_ids) if document_ids else None,
    }
    if document_ids:
        counted = await fetch_all(conn, "lexical_term_frequencies", terms=list(weights), **filters)
    else:
        counted = await fetch_all(
            conn, "lexical_project_term_frequencies", terms=list(weights), project_id=project_id
        )
    frequency = {row["term"]: row["df"] for row in counted}
    idf = {term: lucene_idf(frequency.get(term, 0), total) for term in weights}
    whole = sum(idf.values())  # every distinct term, those no passage has included
    found = [term for term in weights if term in frequency]
    if not found:
        return Prefiltered((), total)
    term_weights = [weights[term] * idf[term] for term in found]
    async with conn.transaction():
        await conn.execute(f"SET LOCAL work_mem = '{WORK_MEM}'")
        # Reading a term's best postings only pays where it has many more; else read them all.
        rescore = rescore or RESCORE_FACTOR * limit
        depths = (
            term_depths(
                term_weights,
                [frequency[term] for term in found],
                depth,
                rescore=rescore,
                whole_read=whole_read,
            )
            if depth > 0 and not document_ids
            else []
        )
        by_impact = any(depth is not None for depth in depths)
        rows = await fetch_all(
            conn,
            "lexical_top_passages_by_impact" if by_impact else "lexical_top_passages",
            **({"rescore": rescore, "depths": depths} if by_impact else {}),
            terms=found,
            weights=term_weights,
            idfs=[idf[term] for term in found],
            average=max(covered.terms / total, 1e-9),
            k1=k1,
            b=b,
            limit=limit,
            **filters,
        )
    passages = [
        PrefilteredPassage(
            str(row["document_id"]),
            row["passage"],
            float(row["bm25"]),
            float(row["covered"]) / whole if whole > 0 else 0.0,
            row["length"],
        )
        for row in rows
    ]
    return Prefiltered(
        passages, total, await _term_passages(conn, index, project_id, query, covered, passages)
    )


async def _term_passages(
    conn: Connection,
    index: ChunkIndex,
    project_id: UUID,
    query: str,
    covered: LexicalStats,
    passages: Sequence[PrefilteredPassage],
) -> dict[str, dict[str, int]]:
    """Per document of ``passages``, how many of its passages hold each query term
    (:attr:`Prefiltered.term_passages`): the query's terms under each stored language's
    analysis, every one (the answer spans' terms are among them). None when a term is too long
    to be stored, so that a count is never missing one."""
    terms = sorted(
        {
            term
            for language in covered.languages or [index.tokenizer.language]
            for term in index.tokenizer_for(language).query_terms(query)
        }
    )
    documents = list(dict.fromkeys(passage.document_id for passage in passages))
    if not documents or any(len(term) > MAX_TERM_CHARS for term in terms):
        return {}
    rows = await fetch_all(
        conn,
        "lexical_document_term_passages",
        project_id=project_id,
        terms=terms,
        document_ids=[UUID(document) for document in documents],
    )
    counts: dict[str, dict[str, int]] = {document: {} for document in documents}
    for row in rows:  # the id comes as text: hundreds of rows a search, each a UUID to parse
        counts[row["document_id"]][row["term"]] = row["passages"]
    return counts
