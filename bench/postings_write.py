"""What writing and deleting a document's postings costs PostgreSQL, per schema version (#28).

``shortlist ingest``'s wall time mixes the CLI's work with the database's, and two batches in
flight blur both; this times the database's part alone. For each schema (the migrations up to
``--before``, then all of them) it makes a fresh database on the local PostgreSQL, writes
``--documents`` four-page SciFact documents (``bench/ingest_growth.py``'s corpus) as ready rows,
then, ``--batch`` documents a transaction, their ``lexical_documents`` rows and their postings
as :func:`service.services.prefilter.store_many_terms` sends them (one COPY, triggers
and all), timing each transaction to its commit; last, it deletes ``--delete`` documents'
stored terms. The terms are made once, by the product's own
:meth:`retrieval.ChunkIndex.passage_terms`, and shared by both schemas. From the repository root::

    .venv/bin/python bench/postings_write.py [--documents 8192] [--batch 1024] [--before 22]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from itertools import islice
from pathlib import Path

import psycopg

REPO_DIR = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_DIR))

from bench.bulk_load import DOCUMENT_COLUMNS, ready_document_row  # noqa: E402
from bench.latency import SCIFACT_DIR, documents, load_abstracts  # noqa: E402
from retrieval.index import ChunkIndex, PassageTerms  # noqa: E402
from retrieval.types import SourceDocument  # noqa: E402
from service.services.prefilter import postings_copy_text, vocabulary  # noqa: E402
from service.storage.migrations import migrate  # noqa: E402
from sql import migrations  # noqa: E402

VOCABULARY_MIGRATION = 23
"""From this migration on, a ``lexical_documents`` row lists its document's terms."""

SERVER = os.environ.get("DATABASE_URL", "postgresql://postgres@127.0.0.1:5432/postgres")


def measure(
    version: int, corpus: list[tuple[SourceDocument, PassageTerms]], batch: int, delete: int
) -> tuple[float, float, int]:
    """(seconds writing the batches' terms, seconds deleting ``delete`` documents' terms,
    postings written)."""
    name = f"bench_postings_write_{uuid.uuid4().hex[:8]}"
    url = f"{SERVER.rsplit('/', 1)[0]}/{name}"
    with psycopg.connect(SERVER, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        asyncio.run(migrate(url, [m for m in migrations if m.version <= version]))
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("INSERT INTO users (name) VALUES ('bench') RETURNING id").fetchone()
            assert row is not None
            project = conn.execute(
                "INSERT INTO projects (user_id, name) VALUES (%s, 'bench') RETURNING id", row
            ).fetchone()
            assert project is not None
            project_id = project[0]
            # Ids from the database's own default, time-ordered as the product's (migration 022).
            with conn.cursor().copy(f"COPY documents ({DOCUMENT_COLUMNS}) FROM STDIN") as copy:
                for document, _ in corpus:
                    copy.write_row(ready_document_row(project_id, document.name, document))
            ids: dict[str, str] = dict(
                conn.execute(
                    "SELECT name, id::text FROM documents WHERE project_id = %s", (project_id,)
                ).fetchall()
            )
            stored = [
                (document._replace(id=ids[document.name]), terms) for document, terms in corpus
            ]
            with_vocabulary = version >= VOCABULARY_MIGRATION
            vocabulary_column = ", vocabulary" if with_vocabulary else ""
            writing = 0.0
            postings = 0
            for start in range(0, len(stored), batch):
                part = stored[start : start + batch]
                text = postings_copy_text(
                    (str(project_id), document.id, terms) for document, terms in part
                )
                postings += text.count("\n")
                began = time.perf_counter()
                with conn.transaction():
                    with conn.cursor().copy(
                        "COPY lexical_documents (project_id, document_id, content_hash, config,"
                        f" language, passages, terms{vocabulary_column}) FROM STDIN"
                    ) as copy:
                        for document, terms in part:
                            row = (
                                project_id,
                                document.id,
                                document.content_hash,
                                "bench",
                                terms.language,
                                len(terms.terms),
                                sum(map(len, terms.terms)),
                            )
                            copy.write_row(row + ((vocabulary(terms),) if with_vocabulary else ()))
                    with conn.cursor().copy(
                        "COPY lexical_postings (project_id, term, document_id, passage, tf,"
                        " length) FROM STDIN"
                    ) as copy:
                        copy.write(text)
                writing += time.perf_counter() - began
            doomed = [document.id for document, _ in stored[:delete]]
            began = time.perf_counter()
            conn.execute(
                "DELETE FROM lexical_documents WHERE project_id = %s AND document_id = ANY(%s)",
                (project_id, doomed),
            )
            deleting = time.perf_counter() - began
            left = conn.execute(
                "SELECT count(*) FROM lexical_postings WHERE document_id = ANY(%s)", (doomed,)
            ).fetchone()
            assert left == (0,), f"{left} postings left of the deleted documents"
        return writing, deleting, postings
    finally:
        with psycopg.connect(SERVER, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--documents", type=int, default=8192)
    parser.add_argument("--batch", type=int, default=1024)
    parser.add_argument("--delete", type=int, default=256)
    parser.add_argument("--before", type=int, default=22, help="the older schema's last migration")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each schema, alternating")
    args = parser.parse_args()
    index = ChunkIndex()
    stream = documents(load_abstracts(SCIFACT_DIR), per_document=4, per_page=1)
    corpus = [(document, index.passage_terms(document))
              for document in islice(stream, args.documents)]  # fmt: skip
    latest = migrations[-1].version
    print(f"command: python bench/postings_write.py {' '.join(sys.argv[1:])}")
    print(f"load average {os.getloadavg()[0]:.1f}, {args.documents} documents, "
          f"{args.batch} a transaction\n")  # fmt: skip
    print("| schema (last migration) | run | postings | writing: s | µs a posting "
          f"| ms a document | deleting {args.delete} documents' terms: ms a document |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---:|---:|")
    for run in range(1, args.rounds + 1):
        for version in (args.before, latest):
            writing, deleting, postings = measure(version, corpus, args.batch, args.delete)
            print(f"| {version:03d} | {run} | {postings:,} | {writing:.2f} "
                  f"| {writing / postings * 1e6:.1f} | {writing / len(corpus) * 1e3:.2f} "
                  f"| {deleting / args.delete * 1e3:.2f} |", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
