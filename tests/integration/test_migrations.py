from __future__ import annotations

import asyncio

import psycopg
import pytest

import sql
from service.storage.migrations import applied_versions, migrate

pytestmark = pytest.mark.anyio


async def test_migrations_apply_once_then_are_a_no_op(empty_database_url: str) -> None:
    first = await migrate(empty_database_url)
    second = await migrate(empty_database_url)

    assert [m.version for m in first] == [m.version for m in sql.migrations]
    assert second == []
    assert await applied_versions(empty_database_url) == [m.version for m in sql.migrations]


async def test_concurrent_start_ups_apply_each_migration_exactly_once(
    empty_database_url: str,
) -> None:
    results = await asyncio.gather(*(migrate(empty_database_url) for _ in range(4)))

    applied = [m.version for result in results for m in result]
    assert sorted(applied) == [m.version for m in sql.migrations]
    assert await applied_versions(empty_database_url) == [m.version for m in sql.migrations]


def _catalog(url: str) -> dict[str, list[tuple[object, ...]]]:
    with psycopg.connect(url) as conn:
        columns = conn.execute(
            """SELECT table_name, column_name, data_type, is_nullable, column_default
               FROM information_schema.columns WHERE table_schema = 'public'
               AND table_name <> 'schema_migrations' AND table_name NOT LIKE 'procrastinate%' ORDER BY 1, 2"""
        ).fetchall()
        indexes = conn.execute(
            """SELECT tablename, indexname, indexdef FROM pg_indexes
               WHERE schemaname = 'public' AND tablename <> 'schema_migrations' AND tablename NOT LIKE 'procrastinate%' ORDER BY 1, 2"""
        ).fetchall()
        constraints = conn.execute(
            """SELECT conrelid::regclass::text, pg_get_constraintdef(oid) FROM pg_constraint
               WHERE connamespace = 'public'::regnamespace
               AND conrelid::regclass::text <> 'schema_migrations'
               AND conrelid::regclass::text NOT LIKE 'procrastinate%' ORDER BY 1, 2"""
        ).fetchall()
    return {"columns": columns, "indexes": indexes, "constraints": constraints}


async def test_schema_sql_equals_all_migrations_applied(
    empty_database_url: str, db_url: str
) -> None:
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        conn.execute(sql.schema)

    assert _catalog(empty_database_url) == _catalog(db_url)


def test_queries_file_parses_into_named_queries() -> None:
    assert "insert_user" in sql.queries
    assert all(query.strip() for query in sql.queries.values())


def test_a_repeated_query_name_is_refused() -> None:
    text = "-- a --\n-- first\nSELECT 1;\n-- a --\n-- again\nSELECT 2;\n"
    with pytest.raises(ValueError, match="defined twice"):
        sql.parse_queries(text)


async def test_the_count_migrations_count_what_is_already_stored(
    empty_database_url: str,
) -> None:
    """Migrations 019 and 021 fill ``lexical_terms`` and ``lexical_project_stats`` from a
    database's existing postings and documents' rows, and 019's triggers keep the counts from
    then on; 023 lists each stored document's terms, so deleting its row deletes its postings
    (through the primary key: the document index is gone); 024's index of the postings above
    its floor holds the existing ones, and a term's best postings are read through it; 025
    leaves the existing rows' written language for the backfill to fill in, and 026 their
    chunk layout."""
    await migrate(empty_database_url, [m for m in sql.migrations if m.version < 19])
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        user = conn.execute("INSERT INTO users (name) VALUES ('old') RETURNING id").fetchone()
        assert user is not None
        project = conn.execute(
            "INSERT INTO projects (user_id, name) VALUES (%s, 'archive') RETURNING id",
            (user[0],),
        ).fetchone()
        assert project is not None
        rows = [
            (project[0], term, document, passage)
            for document in (
                "00000000-0000-0000-0000-000000000001",
                "00000000-0000-0000-0000-000000000002",
            )
            for passage, terms in enumerate((["quokka", "smile"], ["quokka"]))
            for term in terms
        ]
        with conn.cursor() as cursor:
            cursor.executemany(
                "INSERT INTO lexical_postings (project_id, term, document_id, passage, tf, length)"
                " VALUES (%s, %s, %s, %s, 1, 2)",
                rows,
            )
        for n, document in enumerate(sorted({row[2] for row in rows})):
            conn.execute(
                "INSERT INTO documents (id, project_id, name, content_type, size_bytes, status,"
                " markdown, content_hash, kind, page_count, extracted_at) VALUES (%s, %s, %s,"
                " 'text/markdown', 1, 'ready', 'x', 'h', 'text', 1, now())",
                (document, project[0], f"d{n}.md"),
            )
            conn.execute(
                "INSERT INTO lexical_documents (project_id, document_id, content_hash, config,"
                " language, passages, terms) VALUES (%s, %s, 'h', 'c', 'english', 2, 3)",
                (project[0], document),
            )
    await migrate(empty_database_url)
    with psycopg.connect(empty_database_url, autocommit=True) as conn:
        counts = conn.execute("SELECT term, passages FROM lexical_terms ORDER BY term").fetchall()
        assert counts == [("quokka", 4), ("smile", 2)]
        best = conn.execute(  # 024's index holds them (their impact is above its floor)
            "SELECT count(*) FROM lexical_best_postings(%s, 'quokka', 10)", (project[0],)
        ).fetchone()
        assert best == (4,)
        unwritten = conn.execute(
            "SELECT count(*) FROM lexical_documents WHERE written_language IS NULL"
        ).fetchone()
        assert unwritten == (2,)
        unlaid = conn.execute(
            "SELECT count(*) FROM lexical_documents WHERE passage_layout IS NULL"
        ).fetchone()
        assert unlaid == (2,)
        sums = conn.execute(
            "SELECT config, language, documents, passages, terms FROM lexical_project_stats"
        ).fetchall()
        assert sums == [("c", "english", 2, 4, 6)]
        conn.execute(
            "DELETE FROM lexical_postings WHERE document_id = '00000000-0000-0000-0000-000000000001'"
        )
        counts = conn.execute("SELECT term, passages FROM lexical_terms ORDER BY term").fetchall()
        assert counts == [("quokka", 2), ("smile", 1)]
        listed = conn.execute(
            "SELECT ARRAY(SELECT t FROM unnest(vocabulary) t ORDER BY t) FROM lexical_documents"
            " WHERE document_id = '00000000-0000-0000-0000-000000000002'"
        ).fetchone()
        assert listed == (["quokka", "smile"],)
        conn.execute(
            "DELETE FROM lexical_documents"
            " WHERE document_id = '00000000-0000-0000-0000-000000000002'"
        )
        assert conn.execute("SELECT count(*) FROM lexical_postings").fetchone() == (0,)
        assert conn.execute("SELECT count(*) FROM lexical_terms").fetchone() == (0,)
        indexes = conn.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = 'lexical_postings' ORDER BY 1"
        ).fetchall()
        assert indexes == [("lexical_postings_impact_idx",), ("lexical_postings_pkey",)]
