"""The lexical prefilter (#28) against a real PostgreSQL: the same shortlist as the exhaustive
path, kept in sync by re-extraction and deletion, used only from its threshold on, and a
project larger than the chunk cache answering as the exhaustive path does."""

from __future__ import annotations

import contextlib
import hashlib
import json
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any
from uuid import UUID, uuid4

import anyio
import psycopg
import pytest
from psycopg.rows import dict_row

from extract import Extraction
from retrieval import ChunkIndex
from retrieval.index import PassageTerms
from retrieval.pipeline import MAX_QUERY_CHARS
from retrieval.shortlist import DEFAULT_B, DEFAULT_K1
from retrieval.types import SourceDocument
from service.records import Principal
from service.runtime import Runtime, open_runtime
from service.services import prefilter, users
from service.services.extraction import claim, extract_and_save, lexical_terms, save_extraction
from service.services.ingest import ingest_file
from service.services.search import ProjectSearch, search_project
from service.storage.db import snapshot
from sql import queries
from tests.conftest import make_settings
from tests.support.paths import SCIFACT_DIR

pytestmark = pytest.mark.anyio

QUERIES = [
    "vitamin D deficiency and bone fractures",
    "tumor growth in mice",
    "insulin resistance in obese patients",
    "antibiotic resistance of bacteria",
    "gene expression in stem cells",
    "the risk of heart disease",
]


def _abstract_documents(count: int) -> list[tuple[str, str]]:
    """SciFact abstracts, three to a two-page document."""
    with (SCIFACT_DIR / "corpus.jsonl").open(encoding="utf-8") as lines:
        rows = [json.loads(line) for _, line in zip(range(count * 3), lines, strict=False)]
    documents = []
    for start in range(0, len(rows), 3):
        group = rows[start : start + 3]
        pages = [
            f"<!-- page {n + 1} -->\n## {row['title']}\n\n{row['text']}\n"
            for n, row in enumerate(group)
        ]
        documents.append((f"abstracts-{start // 3}.md", "\n".join(pages)))
    return documents


async def _add(conn: psycopg.AsyncConnection[Any], project_id: UUID, name: str, md: str) -> UUID:
    cursor = await conn.execute(
        "INSERT INTO documents (project_id, name, content_type, size_bytes, status, markdown,"
        " content_hash, kind, page_count, extracted_at)"
        " VALUES (%s, %s, 'text/markdown', %s, 'ready', %s, %s, 'text', 1, now()) RETURNING id",
        (project_id, name, len(md), md, hashlib.sha256(md.encode()).hexdigest()),
    )
    row = await cursor.fetchone()
    assert row is not None
    return UUID(str(row["id"]))


class Project:
    def __init__(self, runtime: Runtime, owner: users.NewUser) -> None:
        self.runtime = runtime
        self.owner = owner
        self.principal = Principal(
            user_id=owner.user.id, user_name=owner.user.name, token_id=uuid4()
        )

    async def search(self, query: str, top_k: int = 10) -> ProjectSearch:
        return await search_project(
            self.runtime, self.principal, self.owner.project.id, query, top_k=top_k
        )

    async def uses_prefilter(
        self, query: str, ready: int | None = None, *, counted: bool = False
    ) -> bool:
        async with self.runtime.pool.connection() as conn:
            found = await self.runtime.search.load(
                conn, self.owner.project.id, query=query, ready=ready, counted=counted
            )
        return found.prefiltered is not None

    @contextlib.asynccontextmanager
    async def statements(self) -> AsyncIterator[list[str]]:
        """The statements the pool's one connection sends meanwhile (libpq's own trace of
        the wire protocol: each Parse or simple Query message); needs ``pool_max_size`` 1."""
        async with self.runtime.pool.connection() as conn:
            pgconn = conn.pgconn
        sent: list[str] = []
        with tempfile.TemporaryFile("w+") as trace:
            pgconn.trace(trace.fileno())
            try:
                yield sent
            finally:
                pgconn.untrace()
                trace.seek(0)
                sent.extend(_sent_statements(trace))


def _sent_statements(trace: Iterator[str]) -> list[str]:
    """Each sent statement's first line: a Parse message reads ``"name" "text``, a Query
    message ``"text`` (a statement of several lines goes on over the next lines)."""
    found = []
    for line in trace:
        fields = line.rstrip("\n").split("\t")
        if len(fields) > 4 and fields[1] == "F" and fields[3] in ("Parse", "Query"):
            text = fields[4].strip()
            if fields[3] == "Parse":
                text = text.split('" ', 1)[1]  # past the statement's name
            found.append(text.removeprefix('"').removesuffix('"'))
    return found


#: The first line of the coverage queries a large project's search runs on its own (of
#: some of its documents, of the whole project).
LEXICAL_STATS = tuple(
    queries[name].split("\n", 1)[0].split("%(", 1)[0]
    for name in ("lexical_stats", "lexical_project_stats")
)


async def _backfill(runtime: Runtime) -> None:
    while await prefilter.backfill(runtime):
        pass


async def _project(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any], name: str, **search: object
) -> AsyncIterator[Project]:
    settings = make_settings(
        db_url,
        tmp_path / name,
        search={"reranker": "none", **search},
        server={"run_worker": False},
        database={"pool_min_size": 1, "pool_max_size": 1},
    )
    owner = await users.create_user(conn, name)  # type: ignore[arg-type]
    async with open_runtime(settings, background=False) as runtime:
        yield Project(runtime, owner)


def _ranking(found: ProjectSearch) -> list[tuple[str, tuple[int, int], float]]:
    """Each hit's document (by name: the two projects' ids differ), pages and BM25."""
    return [(hit.document_name, hit.pages, round(hit.bm25, 6)) for hit in found.result.hits]


def _answer(found: ProjectSearch) -> list[tuple[Any, ...]]:
    """Everything a reader sees of each hit but ids (the two projects' differ): what the
    passages' own figures (thinness, citation density) and the documents' own idf (answer
    spans) decide as well as BM25, and the documents sharing most of each source."""
    looks = {
        source.name: [ref.name for ref in source.look_alikes] for source in found.result.sources
    }
    return [
        (
            hit.document_name, hit.pages, hit.heading, hit.text, round(hit.score, 6),
            round(hit.bm25, 6), round(hit.relevance, 6), hit.matched_words, hit.answer_spans,
            [copy.document_name for copy in hit.near_copies], looks.get(hit.document_name),
        )
        for hit in found.result.hits
    ]  # fmt: skip


async def _stored(conn: psycopg.AsyncConnection[Any], document_id: UUID) -> int:
    row = await (
        await conn.execute(
            "SELECT count(*) AS n FROM lexical_postings WHERE document_id = %s", (document_id,)
        )
    ).fetchone()
    assert row is not None
    return int(row["n"])


async def _unlisted(conn: psycopg.AsyncConnection[Any], project_id: UUID) -> int:
    """How many of the project's stored documents do not list exactly their postings' terms
    (what deleting their row deletes by)."""
    row = await (
        await conn.execute(
            "SELECT count(*) AS n FROM lexical_documents l WHERE l.project_id = %s"
            " AND ARRAY(SELECT t FROM unnest(l.vocabulary) t ORDER BY t) IS DISTINCT FROM"
            " ARRAY(SELECT DISTINCT p.term FROM lexical_postings p WHERE p.project_id = %s"
            "       AND p.document_id = l.document_id ORDER BY 1)",
            (project_id, project_id),
        )
    ).fetchone()
    assert row is not None
    return int(row["n"])


async def test_the_prefilter_gives_the_exhaustive_ranking_and_follows_re_extraction_and_delete(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    documents = _abstract_documents(40)
    async for exact in _project(db_url, tmp_path, conn, "exact", prefilter_min_passages=10**9):
        for name, markdown in documents:
            await _add(conn, exact.owner.project.id, name, markdown)
        await _backfill(exact.runtime)
        assert not await exact.uses_prefilter(QUERIES[0]), "below the threshold: exhaustive"
        expected = {query: _ranking(await exact.search(query)) for query in QUERIES}
    async for pre in _project(db_url, tmp_path, conn, "pre", prefilter_min_passages=1):
        by_name = {
            name: await _add(conn, pre.owner.project.id, name, markdown)
            for name, markdown in documents
        }
        assert not await pre.uses_prefilter(QUERIES[0]), "no terms stored yet: exhaustive"
        await _backfill(pre.runtime)
        assert await pre.uses_prefilter(QUERIES[0])
        assert await _unlisted(conn, pre.owner.project.id) == 0
        got = {query: _ranking(await pre.search(query)) for query in QUERIES}

        # Re-extraction: the old text's terms go with it, the new text's come with it.
        target = by_name["abstracts-0.md"]
        await conn.execute("UPDATE documents SET status = 'pending' WHERE id = %s", (target,))
        assert await _stored(conn, target) == 0, "terms outlived the text they describe"
        assert await claim(conn, target) is not None  # type: ignore[arg-type]
        extraction = Extraction(
            markdown="<!-- page 1 -->\n# Zymurgy\n\nZymurgy of quokkas.\n",
            page_count=1,
            page_offsets=(0,),
            kind="text",
        )
        terms = await lexical_terms(pre.runtime, target, "abstracts-0.md", extraction)
        assert await save_extraction(conn, target, extraction, terms=terms)  # type: ignore[arg-type]
        assert await _stored(conn, target) > 0
        assert await _unlisted(conn, pre.owner.project.id) == 0
        assert await pre.uses_prefilter("zymurgy quokkas")
        found = await pre.search("zymurgy quokkas")
        assert [hit.document_id for hit in found.result.hits] == [str(target)]

        # Deletion: the terms go in the same statement.
        await conn.execute(
            queries["delete_document"], {"document_id": target, "user_id": pre.owner.user.id}
        )
        assert await _stored(conn, target) == 0
        assert await pre.uses_prefilter("zymurgy quokkas")
        assert (await pre.search("zymurgy quokkas")).result.hits == []

    assert got == expected


async def _passages(conn: psycopg.AsyncConnection[Any], project_id: UUID) -> int:
    row = await (
        await conn.execute(
            "SELECT sum(passages) AS n FROM lexical_documents WHERE project_id = %s",
            (project_id,),
        )
    ).fetchone()
    assert row is not None
    return int(row["n"])


async def test_the_prefilter_starts_exactly_at_its_threshold(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    documents = _abstract_documents(5)
    async for probe in _project(db_url, tmp_path, conn, "probe"):
        for name, markdown in documents:
            await _add(conn, probe.owner.project.id, name, markdown)
        await _backfill(probe.runtime)
        passages = await _passages(conn, probe.owner.project.id)
    for threshold, used in ((passages, True), (passages + 1, False)):
        async for project in _project(
            db_url, tmp_path, conn, f"at{threshold}", prefilter_min_passages=threshold
        ):
            for name, markdown in documents:
                await _add(conn, project.owner.project.id, name, markdown)
            await _backfill(project.runtime)
            assert await project.uses_prefilter(QUERIES[0]) is used, (threshold, passages)


async def test_a_project_larger_than_the_chunk_cache_answers_as_the_exhaustive_path(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """The whole answer, not only the ranking: the prefiltered search reads its documents
    only chunked, with the passages' lengths and the documents' term counts stored."""
    documents = _abstract_documents(120)
    async for exact in _project(db_url, tmp_path, conn, "roomy", prefilter_min_passages=10**9):
        for name, markdown in documents:
            await _add(conn, exact.owner.project.id, name, markdown)
        expected = {query: _answer(await exact.search(query)) for query in QUERIES}
        assert exact.runtime.search.index.nbytes > 1024 * 1024, "the project fits 1 MB"
    async for small in _project(
        db_url, tmp_path, conn, "small", prefilter_min_passages=1, cache_max_mb=1
    ):
        for name, markdown in documents:
            await _add(conn, small.owner.project.id, name, markdown)
        await _backfill(small.runtime)
        got = {}
        for query in QUERIES:
            got[query] = _answer(await small.search(query))
            assert small.runtime.search.index.nbytes <= 1024 * 1024
        assert await small.uses_prefilter(QUERIES[0])
    assert got == expected


async def test_an_extraction_stores_its_terms_with_its_text(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """The worker's own save (``extract_and_save``): text and terms in one transaction."""
    source = tmp_path / "notes.md"
    source.write_text("# Quokka notes\n\nQuokkas smile at zymurgists.\n")
    async for project in _project(db_url, tmp_path, conn, "worker", prefilter_min_passages=1):
        ingested = await ingest_file(project.runtime, project.owner.project, source)
        assert ingested.document is not None
        document_id = ingested.document.id
        assert await _stored(conn, document_id) > 0, "shortlist ingest stored no terms"
        await conn.execute(  # back to pending, then claimed, as a re-extraction does
            queries["reset_document_for_extraction"],
            {"document_id": document_id, "user_id": project.owner.user.id},
        )
        assert await _stored(conn, document_id) == 0
        assert await claim(conn, document_id) is not None  # type: ignore[arg-type]
        outcome = await extract_and_save(
            project.runtime, document_id, source.read_bytes(), "notes.md", "text/markdown"
        )
        assert outcome.status == "ready"
        assert await _stored(conn, document_id) > 0
        assert await project.uses_prefilter("quokkas zymurgists")
        found = await project.search("quokkas zymurgists")
        assert [hit.document_id for hit in found.result.hits] == [str(document_id)]


async def test_a_small_project_is_searched_exhaustively_without_a_query_of_its_own(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """Below the threshold the coverage comes with the documents' list the exhaustive search
    reads anyway: no ``lexical_stats`` round trip."""
    async for project in _project(db_url, tmp_path, conn, "small"):
        for name, markdown in _abstract_documents(5):
            await _add(conn, project.owner.project.id, name, markdown)
        await _backfill(project.runtime)
        for query in QUERIES[:2]:  # the first search of the process, then a later one
            async with project.statements() as sent:
                found = await project.search(query)
            assert found.result.hits and found.result.exhaustive
            assert any(s.startswith("SELECT d.id, d.name") for s in sent), sent
            assert not [s for s in sent if s.startswith(LEXICAL_STATS)], sent
        assert not await project.uses_prefilter(QUERIES[0], ready=5)


async def test_the_switch_follows_the_project_across_the_threshold_both_ways(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """What a process remembers of a project's size only picks the first query: growing past
    the threshold, or shrinking below it, switches the very next search."""
    documents = _abstract_documents(12)
    async for probe in _project(db_url, tmp_path, conn, "probe"):
        for name, markdown in documents[:6]:
            await _add(conn, probe.owner.project.id, name, markdown)
        await _backfill(probe.runtime)
        first = await _passages(conn, probe.owner.project.id)
        for name, markdown in documents[6:]:
            await _add(conn, probe.owner.project.id, name, markdown)
        await _backfill(probe.runtime)
        second = await _passages(conn, probe.owner.project.id) - first
    threshold = max(first, second) + 1  # either half below it, the two together above
    async for project in _project(
        db_url, tmp_path, conn, "growing", prefilter_min_passages=threshold
    ):
        pid = project.owner.project.id
        ids = [await _add(conn, pid, name, markdown) for name, markdown in documents[:6]]
        await _backfill(project.runtime)
        assert not await project.uses_prefilter(QUERIES[0], ready=6), "below: exhaustive"
        for name, markdown in documents[6:]:
            await _add(conn, pid, name, markdown)
        assert not await project.uses_prefilter(QUERIES[0], ready=12), "terms missing"
        await _backfill(project.runtime)
        assert await project.uses_prefilter(QUERIES[0], ready=12), "above: prefiltered"
        async with project.statements() as sent:
            assert await project.uses_prefilter(QUERIES[0], ready=12)
        assert [s for s in sent if s.startswith(LEXICAL_STATS)], "large: coverage on its own"
        for document_id in ids:
            await conn.execute(
                queries["delete_document"],
                {"document_id": document_id, "user_id": project.owner.user.id},
            )
        assert not await project.uses_prefilter(QUERIES[0], ready=6), "below again"


@pytest.mark.parametrize("ready_hint", [None, 1, 10**6])
async def test_missing_or_stale_terms_keep_the_search_exhaustive_whichever_query_runs_first(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any], ready_hint: int | None
) -> None:
    """Whether the coverage is read with the documents' list (a small-looking project) or on
    its own (a large-looking one), a project with one document's terms missing or made with
    another configuration is searched exhaustively."""
    async for project in _project(
        db_url, tmp_path, conn, f"stale{ready_hint}", prefilter_min_passages=1
    ):
        pid = project.owner.project.id
        documents = _abstract_documents(4)
        for name, markdown in documents[:3]:
            await _add(conn, pid, name, markdown)
        await _backfill(project.runtime)
        late = await _add(conn, pid, *documents[3])
        assert not await project.uses_prefilter(QUERIES[0], ready=ready_hint), "missing terms"
        await _backfill(project.runtime)
        assert await project.uses_prefilter(QUERIES[0], ready=ready_hint)
        await conn.execute(
            "UPDATE lexical_documents SET config = 'another' WHERE document_id = %s", (late,)
        )
        assert not await project.uses_prefilter(QUERIES[0], ready=ready_hint), "stale terms"


async def test_a_search_reads_in_one_snapshot_and_takes_the_ready_count_read_in_it(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """A search reads the project and what is stored of it in one read-only snapshot
    (:func:`snapshot`): a document made ready meanwhile is not seen, and nothing can be
    written. So the project's ready count read there is the count a large project's search
    takes, not counted again: given as counted, it is believed (one that disagrees with the
    stored terms keeps the search exhaustive), where as a hint it is counted again."""
    async for project in _project(db_url, tmp_path, conn, "snapshot", prefilter_min_passages=1):
        pid = project.owner.project.id
        documents = _abstract_documents(4)
        for name, markdown in documents[:3]:
            await _add(conn, pid, name, markdown)
        await _backfill(project.runtime)
        ready = "SELECT count(*) AS n FROM documents WHERE project_id = %s AND status = 'ready'"
        async with project.runtime.pool.connection() as c, snapshot(c):
            before = await (await c.execute(ready, (pid,))).fetchone()
            await _add(conn, pid, *documents[3])  # committed by another connection
            after = await (await c.execute(ready, (pid,))).fetchone()
            assert before == after == {"n": 3}
            with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
                await c.execute("UPDATE documents SET name = name WHERE project_id = %s", (pid,))
        await _backfill(project.runtime)

        assert await project.uses_prefilter(QUERIES[0], ready=4, counted=True)
        assert not await project.uses_prefilter(QUERIES[0], ready=5, counted=True)
        assert await project.uses_prefilter(QUERIES[0], ready=5), "a hint: counted again"
        async with project.statements() as sent:
            assert (await project.search(QUERIES[0])).result.hits
        ranking = queries["lexical_top_passages_by_impact"].split("\n", 1)[0]
        read = [s for s in sent if s.startswith(("SELECT", "WITH"))]
        first, last = sent.index(read[0]), sent.index(read[-1])
        assert sent[first - 2 : first] == [
            "BEGIN",
            "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY",
        ], sent
        assert "COMMIT" in sent[last:] and "COMMIT" not in sent[first:last], sent
        assert [s for s in read if s.startswith(LEXICAL_STATS)] and ranking in read, sent


@pytest.mark.parametrize("threshold", [1, 10**9])
async def test_a_search_hands_the_stored_languages_of_the_documents_it_chunks(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any], threshold: int
) -> None:
    """Both paths pass the language stored with current terms for each document the cache
    lacks, so chunking it does not detect it again; a document without terms gets none."""
    async for project in _project(
        db_url, tmp_path, conn, f"languages{threshold}", prefilter_min_passages=threshold
    ):
        pid = project.owner.project.id
        documents = _abstract_documents(3)
        for name, markdown in documents[:2]:
            await _add(conn, pid, name, markdown)
        await _backfill(project.runtime)
        bare = await _add(conn, pid, *documents[2])  # no terms: the search stays exhaustive
        async with project.runtime.pool.connection() as c:
            found = await project.runtime.search.load(c, pid, query=QUERIES[0])
        assert found.prefiltered is None and len(found.documents) == 3
        assert sorted(found.languages.values()) == ["english", "english"]
        assert str(bare) not in found.languages
        await _backfill(project.runtime)
        async with project.runtime.pool.connection() as c:
            found = await project.runtime.search.load(c, pid, query=QUERIES[0])
        assert (found.prefiltered is not None) is (threshold == 1)
        assert found.documents
        assert set(found.languages) == {doc.id for doc in found.documents}


CHINESE = (
    "量子.md",
    "<!-- page 1 -->\n# 量子计算\n\n量子计算机利用量子力学原理进行信息处理。研究人员在实验室中"
    "测试了新的算法，结果显示计算速度显著提高。这项研究为未来的应用打下了基础。\n",
)


async def _languages_stored(
    conn: psycopg.AsyncConnection[Any], project_id: UUID
) -> dict[str, tuple[str, str | None]]:
    """Each of the project's stored documents' stemming and written languages."""
    rows = await (
        await conn.execute(
            "SELECT document_id, language, written_language FROM lexical_documents"
            " WHERE project_id = %s",
            (project_id,),
        )
    ).fetchall()
    return {str(r["document_id"]): (r["language"], r["written_language"]) for r in rows}


async def _languages_handed(project: Project) -> dict[str, str]:
    """The written languages a search of the whole project hands the chunk cache, the cache
    emptied first (as after a restart: every text is loaded)."""
    project.runtime.search.index.clear()
    async with project.runtime.pool.connection() as c:
        found = await project.runtime.search.load(c, project.owner.project.id, query="量子计算")
    assert len(found.documents) == 2
    return dict(found.languages)


async def test_the_written_language_is_stored_with_the_terms_and_filled_in_where_missing(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """A document in Chinese is stemmed as the default language (read in bigrams) but written
    in Chinese: both are stored with its terms, and a search hands the cache the written one.
    Rows stored before migration 025 have none: a search hands none for them (the cache
    detects it), until the backfill fills it in from the start of the text."""
    async for project in _project(db_url, tmp_path, conn, "written", prefilter_min_passages=10**9):
        pid = project.owner.project.id
        english = await _add(conn, pid, *_abstract_documents(1)[0])
        chinese = await _add(conn, pid, *CHINESE)
        stored = {str(english): ("english", "english"), str(chinese): ("english", "chinese")}
        handed = {str(english): "english", str(chinese): "chinese"}

        await _backfill(project.runtime)
        assert await _languages_stored(conn, pid) == stored
        assert await _languages_handed(project) == handed
        hit = (await project.search("量子计算")).result.hits[0]
        assert hit.document_name == CHINESE[0]

        await conn.execute(
            "UPDATE lexical_documents SET written_language = NULL WHERE project_id = %s", (pid,)
        )
        assert await _languages_handed(project) == {}
        assert await prefilter.backfill(project.runtime) == 2
        assert await prefilter.backfill(project.runtime) == 0
        assert await _languages_stored(conn, pid) == stored
        assert await _languages_handed(project) == handed


async def _layouts_stored(conn: psycopg.AsyncConnection[Any], project_id: UUID) -> dict[str, Any]:
    rows = await (
        await conn.execute(
            "SELECT document_id, passage_layout FROM lexical_documents WHERE project_id = %s",
            (project_id,),
        )
    ).fetchall()
    return {str(r["document_id"]): r["passage_layout"] for r in rows}


async def _layouts_handed(project: Project, query: str) -> dict[str, Any]:
    """The chunk layouts a search hands the chunk cache with the Markdown it loads, the cache
    emptied first (as after a restart: every shortlisted text is loaded)."""
    project.runtime.search.index.clear()
    async with project.runtime.pool.connection() as c:
        found = await project.runtime.search.load(c, project.owner.project.id, query=query)
    assert found.prefiltered is not None and found.documents
    return {doc.id: doc.layout for doc in found.documents}


async def test_each_document_s_chunk_layout_is_stored_with_its_terms_and_filled_in_where_missing(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """Where each chunk lies is stored with the terms (migration 026) and handed to the chunk
    cache with the Markdown a search loads, which then slices the passages out: the same
    answer as chunking them. Rows stored before 026 have none: a search hands none (the cache
    chunks those documents), until the backfill fills it in."""
    async for project in _project(db_url, tmp_path, conn, "laid", prefilter_min_passages=1):
        pid = project.owner.project.id
        index = project.runtime.search.index
        texts = {str(await _add(conn, pid, name, md)): md for name, md in _abstract_documents(4)}
        query = "human cerebral white matter and DNA methylation"

        await _backfill(project.runtime)
        stored = await _layouts_stored(conn, pid)
        expected = {id_: index.chunk_layout(md) for id_, md in texts.items()}
        assert {id_: prefilter.stored_layout(value) for id_, value in stored.items()} == expected
        handed = await _layouts_handed(project, query)
        assert handed == {id_: expected[id_] for id_ in handed}
        laid = (await project.search(query)).result.hits
        assert len(handed) >= 2 and laid

        await conn.execute(
            "UPDATE lexical_documents SET passage_layout = NULL WHERE project_id = %s", (pid,)
        )
        assert set((await _layouts_handed(project, query)).values()) == {None}
        project.runtime.search.index.clear()
        assert (await project.search(query)).result.hits == laid
        assert await prefilter.backfill(project.runtime) == 4
        assert await prefilter.backfill(project.runtime) == 0
        assert await _layouts_stored(conn, pid) == stored


async def _store_terms(
    url: str, document: SourceDocument, index: ChunkIndex, terms: PassageTerms, out: list[bool]
) -> None:
    """:func:`prefilter.store_terms` in a transaction of its own connection."""
    async with (
        await psycopg.AsyncConnection.connect(url, row_factory=dict_row) as writer,
        writer.transaction(),
    ):
        out.append(await prefilter.store_terms(writer, document, index.terms_config, terms))


async def test_terms_stored_while_the_text_changes_are_dropped_with_it(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """The backfill read a ready document and stores its terms just as a re-extraction sets
    it back to pending: storing waits for that change to commit, then stores nothing, so a
    stored row is only ever of a ready document with that text (``lexical_stats`` counts
    them without looking at the documents)."""
    async for project in _project(db_url, tmp_path, conn, "race", prefilter_min_passages=1):
        name, markdown = _abstract_documents(1)[0]
        document_id = await _add(conn, project.owner.project.id, name, markdown)
        document = SourceDocument(
            str(document_id), name, hashlib.sha256(markdown.encode()).hexdigest(), markdown
        )
        index = project.runtime.search.index
        terms = await prefilter.passage_terms(index, document)
        stored: list[bool] = []
        async with (
            await psycopg.AsyncConnection.connect(db_url) as changer,
            anyio.create_task_group() as tasks,
            changer.transaction(),
        ):
            await changer.execute(
                "UPDATE documents SET status = 'pending' WHERE id = %s", (document_id,)
            )
            tasks.start_soon(_store_terms, db_url, document, index, terms, stored)
            await anyio.sleep(0.5)
            assert not stored, "the terms were stored beside an uncommitted change"
        assert stored == [False]
        assert await _stored(conn, document_id) == 0
        row = await (
            await conn.execute(
                "SELECT count(*) AS n FROM lexical_documents WHERE document_id = %s",
                (document_id,),
            )
        ).fetchone()
        assert row is not None and row["n"] == 0


async def _frequencies(conn: psycopg.AsyncConnection[Any], project_id: UUID) -> dict[str, int]:
    """The project's stored document frequencies, after checking them against its postings."""
    stored = await (
        await conn.execute(
            "SELECT term, passages FROM lexical_terms WHERE project_id = %s", (project_id,)
        )
    ).fetchall()
    counted = await (
        await conn.execute(
            "SELECT term, count(*) AS passages FROM lexical_postings WHERE project_id = %s"
            " GROUP BY term",
            (project_id,),
        )
    ).fetchall()
    found = {row["term"]: row["passages"] for row in stored}
    assert found == {row["term"]: row["passages"] for row in counted}
    await _check_project_stats(conn, project_id)
    return found


async def _check_project_stats(conn: psycopg.AsyncConnection[Any], project_id: UUID) -> None:
    """``lexical_project_stats`` (migration 021) is what summing ``lexical_documents`` gives."""
    kept = await (
        await conn.execute(
            "SELECT config, language, documents, passages, terms FROM lexical_project_stats"
            " WHERE project_id = %s ORDER BY 1, 2",
            (project_id,),
        )
    ).fetchall()
    summed = await (
        await conn.execute(
            "SELECT config, language, count(*) AS documents, sum(passages) AS passages,"
            " sum(terms) AS terms FROM lexical_documents WHERE project_id = %s"
            " GROUP BY 1, 2 ORDER BY 1, 2",
            (project_id,),
        )
    ).fetchall()
    assert [tuple(row.values()) for row in kept] == [tuple(row.values()) for row in summed]


async def test_term_frequencies_follow_every_write_and_drop_of_the_postings(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """``lexical_terms`` (migration 019) and ``lexical_project_stats`` (021) are what counting
    the postings and summing the documents' rows would give after a backfill, two writers at
    once, a re-extraction, a deletion and the project's deletion."""
    documents = _abstract_documents(12)
    async for project in _project(db_url, tmp_path, conn, "counts", prefilter_min_passages=1):
        project_id = project.owner.project.id
        ids = [await _add(conn, project_id, name, markdown) for name, markdown in documents]
        await _backfill(project.runtime)
        before = await _frequencies(conn, project_id)
        assert before and max(before.values()) > 1

        # Two writers storing documents with words in common: the second waits for the first.
        index = project.runtime.search.index
        added = []
        for n in range(2):
            markdown = f"<!-- page 1 -->\n# Quokka census {n}\n\nQuokkas of island {n}.\n"
            document_id = await _add(conn, project_id, f"census-{n}.md", markdown)
            document = SourceDocument(
                str(document_id),
                f"census-{n}.md",
                hashlib.sha256(markdown.encode()).hexdigest(),
                markdown,
            )
            added.append((document, await prefilter.passage_terms(index, document)))
        stored: list[bool] = []
        async with (
            await psycopg.AsyncConnection.connect(db_url, row_factory=dict_row) as first,
            anyio.create_task_group() as tasks,
            first.transaction(),
        ):
            stored.append(
                await prefilter.store_terms(first, added[0][0], index.terms_config, added[0][1])
            )
            tasks.start_soon(_store_terms, db_url, added[1][0], index, added[1][1], stored)
            await anyio.sleep(0.3)
        assert stored == [True, True]
        counts = await _frequencies(conn, project_id)
        assert counts["quokka"] == before.get("quokka", 0) + 2
        assert counts["census"] == 2

        # Re-extraction drops the old text's counts; deletion drops the rows that reach 0.
        await conn.execute("UPDATE documents SET status = 'pending' WHERE id = %s", (ids[0],))
        assert sum((await _frequencies(conn, project_id)).values()) < sum(counts.values())
        await conn.execute(
            queries["delete_document"],
            {"document_id": added[0][0].id, "user_id": project.owner.user.id},
        )
        counts = await _frequencies(conn, project_id)
        assert counts["census"] == 1
        await conn.execute(
            queries["delete_document"],
            {"document_id": added[1][0].id, "user_id": project.owner.user.id},
        )
        assert "census" not in await _frequencies(conn, project_id)

        stats = await (
            await conn.execute(
                "SELECT documents FROM lexical_project_stats WHERE project_id = %s", (project_id,)
            )
        ).fetchall()
        assert [row["documents"] for row in stats] == [len(ids) - 1]
        await conn.execute("DELETE FROM projects WHERE id = %s", (project_id,))
        assert await _frequencies(conn, project_id) == {}
        assert not await (
            await conn.execute(
                "SELECT 1 FROM lexical_project_stats WHERE project_id = %s", (project_id,)
            )
        ).fetchall()


async def test_a_search_of_some_documents_counts_their_own_frequencies(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """The stored frequencies are the whole project's; a search of some of its documents
    counts theirs from the postings, and answers as the exhaustive path does."""
    documents = _abstract_documents(30)
    chosen = [name for name, _ in documents[::3]]
    answers = []
    for name, threshold in (("some-exact", 10**9), ("some-pre", 1)):
        async for project in _project(
            db_url, tmp_path, conn, name, prefilter_min_passages=threshold
        ):
            ids = {
                doc: await _add(conn, project.owner.project.id, doc, markdown)
                for doc, markdown in documents
            }
            await _backfill(project.runtime)
            assert await project.uses_prefilter(QUERIES[0]) is (threshold == 1)
            answers.append(
                {
                    query: _ranking(
                        await search_project(
                            project.runtime,
                            project.principal,
                            project.owner.project.id,
                            query,
                            documents=[ids[doc] for doc in chosen],
                        )
                    )
                    for query in QUERIES
                }
            )
    assert answers[0] == answers[1]
    assert any(answers[0].values())


async def test_the_impact_order_is_bm25_at_the_reference_length(
    conn: psycopg.AsyncConnection[Any],
) -> None:
    """``lexical_impact`` (migrations 020 and 024) is Lucene's term saturation at the k1 and b
    every search uses and :data:`prefilter.IMPACT_REFERENCE_LENGTH`: one formula in two
    languages."""
    for tf, length in ((1, 1), (1, 115), (3, 40), (7, 900)):
        row = await (
            await conn.execute("SELECT lexical_impact(%s, %s) AS impact", (tf, length))
        ).fetchone()
        assert row is not None
        expected = tf / (
            tf
            + DEFAULT_K1 * (1 - DEFAULT_B + DEFAULT_B * length / prefilter.IMPACT_REFERENCE_LENGTH)
        )
        assert row["impact"] == pytest.approx(expected, rel=1e-6)


async def test_reading_each_terms_best_postings_scores_what_it_returns_exactly(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """With a depth far below the terms' document frequencies the shortlist is read from each
    such term's best postings (and every posting of the rarer terms), yet every passage it
    returns carries its exact BM25, term coverage and length, the best one is the exact
    shortlist's, and a depth above every frequency gives the exact shortlist. Exact too for a
    query with more deep terms than are read (:data:`prefilter.MAX_READ_TERMS`)."""
    documents = _abstract_documents(120)
    async for project in _project(db_url, tmp_path, conn, "depth", prefilter_min_passages=1):
        project_id = project.owner.project.id
        for name, markdown in documents:
            await _add(conn, project_id, name, markdown)
        await _backfill(project.runtime)
        index = project.runtime.search.index
        frequencies = await _frequencies(conn, project_id)
        mixed = 0  # queries with terms both past the depth and within it
        async with project.runtime.pool.connection() as db:
            covered = await prefilter.stats(db, index.terms_config, project_id, None)
            for query in QUERIES:
                terms = index.query_term_weights(query, covered.languages)
                # past twice the depth, a term is not read whole (prefilter.WHOLE_READ_PROBES)
                assert max(frequencies.get(term, 0) for term in terms) > 16, "nothing truncated"
                mixed += 0 < min(frequencies.get(term, 0) or 9 for term in terms) <= 8
                everything = await prefilter.shortlist(
                    db, index, project_id, query, covered, None, limit=covered.passages
                )
                exact = {(p.document_id, p.ordinal): p for p in everything.passages}
                shallow = await prefilter.shortlist(
                    db, index, project_id, query, covered, None, limit=20, depth=8
                )
                best = everything.passages[0]
                assert shallow.passages[0][:2] == (best.document_id, best.ordinal)
                for passage in shallow.passages:
                    found = exact[(passage.document_id, passage.ordinal)]
                    assert passage.bm25 == pytest.approx(found.bm25, rel=1e-9)
                    assert passage.coverage == pytest.approx(found.coverage, rel=1e-9)
                    assert passage.length == found.length
                deep = await prefilter.shortlist(
                    db, index, project_id, query, covered, None, limit=20, depth=10**6
                )
                assert [(p.document_id, p.ordinal) for p in deep.passages] == [
                    (p.document_id, p.ordinal) for p in everything.passages[:20]
                ]
            # More deep terms than the read mask has bits: the lightest are only probed.
            common = sorted(frequencies, key=lambda term: (-frequencies[term], term))
            long_query = " ".join(term for term in common if term.isalpha())[:MAX_QUERY_CHARS]
            terms = index.query_term_weights(long_query, covered.languages)
            assert sum(frequencies.get(term, 0) > 8 for term in terms) > prefilter.MAX_READ_TERMS
            everything = await prefilter.shortlist(
                db, index, project_id, long_query, covered, None, limit=covered.passages
            )
            exact = {(p.document_id, p.ordinal): p for p in everything.passages}
            shallow = await prefilter.shortlist(
                db, index, project_id, long_query, covered, None, limit=20, depth=8
            )
            assert len(shallow.passages) == 20
            for passage in shallow.passages:
                found = exact[(passage.document_id, passage.ordinal)]
                assert passage.bm25 == pytest.approx(found.bm25, rel=1e-9)
                assert passage.coverage == pytest.approx(found.coverage, rel=1e-9)
        assert mixed >= 2


async def test_a_terms_best_postings_are_its_best_whether_or_not_the_index_holds_enough(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """The impact index holds only postings at or above the floor (migration 024);
    ``lexical_best_postings`` still returns a term's ``depth`` best by impact: from the index
    alone where it holds that many, with the best of the rest under the floor where it holds
    fewer, and every posting where the term has no more. The planner proves the index's
    predicate (with scans by the table ruled out, its read is the index's or none)."""
    documents = _abstract_documents(40)
    async for project in _project(db_url, tmp_path, conn, "floor", prefilter_min_passages=1):
        project_id = project.owner.project.id
        for name, markdown in documents:
            await _add(conn, project_id, name, markdown)
        await _backfill(project.runtime)
        rows = await (
            await conn.execute(
                "SELECT term, count(*) AS df, count(*) FILTER (WHERE lexical_impact(tf, length)"
                " >= lexical_impact_floor()) AS above FROM lexical_postings WHERE project_id = %s"
                " GROUP BY term HAVING count(*) >= 12 ORDER BY df DESC, term LIMIT 20",
                (project_id,),
            )
        ).fetchall()
        cases = [
            (row["term"], depth, row["above"], row["df"])
            for row in rows
            for depth in sorted(
                {1, row["above"] // 2, row["above"], row["above"] + 3, row["df"] + 5}
            )
            if depth > 0
        ]
        assert any(depth <= above for _, depth, above, _ in cases), "no read of the index alone"
        assert any(above < depth < df for _, depth, above, df in cases), "no read past the floor"
        assert any(depth >= df for _, depth, _, df in cases), "no read of every posting"
        async with conn.transaction():
            await conn.execute("SET LOCAL enable_seqscan = off")
            await conn.execute("SET LOCAL enable_bitmapscan = off")
            for term, depth, _, _ in cases:
                best = await (
                    await conn.execute(
                        "SELECT lexical_impact(tf, length) AS impact, document_id, passage"
                        " FROM lexical_best_postings(%s, %s, %s) ORDER BY 1 DESC",
                        (project_id, term, depth),
                    )
                ).fetchall()
                every = await (
                    await conn.execute(
                        "SELECT lexical_impact(tf, length) AS impact FROM lexical_postings"
                        " WHERE project_id = %s AND term = %s ORDER BY 1 DESC LIMIT %s",
                        (project_id, term, depth),
                    )
                ).fetchall()
                assert [row["impact"] for row in best] == [row["impact"] for row in every]
                assert len({(row["document_id"], row["passage"]) for row in best}) == len(best)
            plan = await (
                await conn.execute(
                    "EXPLAIN SELECT * FROM lexical_best_postings(%s, %s, 10)",
                    (project_id, rows[0]["term"]),
                )
            ).fetchall()
        assert "lexical_postings_impact_idx" in "\n".join(row["QUERY PLAN"] for row in plan)
        counted = await (
            await conn.execute(
                "SELECT count(*) FILTER (WHERE lexical_impact(tf, length) >= lexical_impact_floor())"
                " AS indexed, count(*) AS total FROM lexical_postings WHERE project_id = %s",
                (project_id,),
            )
        ).fetchone()
        assert counted is not None
        assert 0 < counted["indexed"] < counted["total"] / 2, "the floor leaves most postings out"


async def test_a_search_at_a_shallow_depth_setting_answers_first_as_the_exhaustive_path(
    db_url: str, tmp_path: Path, conn: psycopg.AsyncConnection[Any]
) -> None:
    """``search.prefilter_term_depth`` reaches the shortlist through the search: far below the
    terms' frequencies, each query's best hit is still the exhaustive path's, with its score."""
    documents = _abstract_documents(120)
    async for exact in _project(db_url, tmp_path, conn, "all", prefilter_min_passages=10**9):
        for name, markdown in documents:
            await _add(conn, exact.owner.project.id, name, markdown)
        expected = {query: _ranking(await exact.search(query))[0] for query in QUERIES}
    async for shallow in _project(
        db_url, tmp_path, conn, "few", prefilter_min_passages=1, prefilter_term_depth=8
    ):
        for name, markdown in documents:
            await _add(conn, shallow.owner.project.id, name, markdown)
        await _backfill(shallow.runtime)
        frequencies = await _frequencies(conn, shallow.owner.project.id)
        assert max(frequencies.values()) > 2 * prefilter.term_depth(8, 400), "nothing truncated"
        async with shallow.runtime.pool.connection() as lent:
            pgconn = lent.pgconn  # the pool's one connection
        with tempfile.TemporaryFile("w+") as trace:
            pgconn.trace(trace.fileno())
            try:
                got = {query: _ranking(await shallow.search(query))[0] for query in QUERIES}
            finally:
                pgconn.untrace()
            trace.seek(0)
            assert "lexical_best_postings(" in trace.read(), "the best-postings query never ran"
    assert got == expected
