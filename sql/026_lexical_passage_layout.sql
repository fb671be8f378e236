-- Each stored document's chunk layout, so that a search need not chunk it again (#28).
--
-- A search of a large project chunks the documents of the passages PostgreSQL shortlisted
-- that the chunk cache lacks: fifty or so for each new query at 100k passages, most of the
-- process's CPU of such a search (docs/benchmarks.md). The terms stored for a document were
-- made from exactly those chunks (the row's config names the chunker and its chunk size), so
-- whoever writes the row stores where each chunk lies beside them (store_lexical_documents
-- in sql/queries.sql; retrieval/chunking.py's chunk_layout), and a search reads it with the
-- Markdown it fetches and only slices the passages out.
--
-- One JSON array per document, an element per passage:
-- [start, end, first page, last page, heading breadcrumb, prefix] (service/services/prefilter.py
-- writes and reads it). Rows written before this migration have none: a search chunks those
-- documents as before, and the lexical backfill fills it in a batch at a time, through the
-- partial index below, which is empty once it is done.

ALTER TABLE lexical_documents ADD COLUMN passage_layout jsonb
    CHECK (jsonb_typeof(passage_layout) = 'array');

CREATE INDEX lexical_documents_unlaid_idx ON lexical_documents (document_id)
    WHERE passage_layout IS NULL;
