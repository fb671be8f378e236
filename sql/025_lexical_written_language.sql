-- Each stored document's written language, so that a search need not detect it (#28).
--
-- A search of a large project chunks the documents of the passages PostgreSQL shortlisted,
-- and most of them, a different few hundred for every new query, are not in the chunk cache.
-- Chunking one detected the language its text is written in (retrieval/language.py: which
-- stemmer reads it, and whether the multilingual model reads it across languages), half the
-- process's CPU of such a search (docs/benchmarks.md). lexical_documents.language is only the
-- stemming language (English for a document in Chinese, which is read in bigrams), so the
-- written one is stored beside it by whoever writes the row (store_lexical_documents in
-- sql/queries.sql) and read with the document's list.
--
-- Rows written before this migration have none: a search detects those documents' language as
-- before, and the lexical backfill (service/services/prefilter.py) fills them in from the
-- start of each document's text, a batch at a time, through the partial index below, which
-- is empty once it is done.

ALTER TABLE lexical_documents ADD COLUMN written_language text;

CREATE INDEX lexical_documents_unwritten_idx ON lexical_documents (document_id)
    WHERE written_language IS NULL;
