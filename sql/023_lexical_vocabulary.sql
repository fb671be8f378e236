-- A document's postings are deleted through the primary key, by the terms they hold (#28).
-- lexical_postings kept a third btree, (project_id, document_id), only so that a document's
-- postings could be found to delete them: every posting written paid for an entry in an index
-- that served nothing but deletes. Each lexical_documents row now lists its document's
-- distinct terms (vocabulary), written with the row by whoever writes the postings
-- (store_lexical_documents in sql/queries.sql); deleting the row deletes one primary-key range
-- of postings per term. Writing a batch's terms took PostgreSQL 7-20 % less time
-- (bench/postings_write.py, docs/benchmarks.md). The vocabulary was first kept by a statement
-- trigger on lexical_postings instead; aggregating each statement's rows per document cost
-- two thirds of what dropping the index saved.

-- No default: a writer that left it out would leave postings no delete could find.
ALTER TABLE lexical_documents ADD COLUMN vocabulary text[];

-- The project's sums change only with these columns (not with the vocabulary).
DROP TRIGGER lexical_documents_count ON lexical_documents;
CREATE CONSTRAINT TRIGGER lexical_documents_count
    AFTER INSERT OR UPDATE OF project_id, config, language, passages, terms OR DELETE
    ON lexical_documents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION lexical_count_document();

-- Documents already stored: their terms, from one pass over the postings.
UPDATE lexical_documents l SET vocabulary = v.terms
FROM (SELECT project_id, document_id, array_agg(DISTINCT term ORDER BY term) AS terms
      FROM lexical_postings GROUP BY project_id, document_id) v
WHERE l.project_id = v.project_id AND l.document_id = v.document_id;
UPDATE lexical_documents SET vocabulary = '{}' WHERE vocabulary IS NULL;
ALTER TABLE lexical_documents ALTER COLUMN vocabulary SET NOT NULL;

CREATE OR REPLACE FUNCTION lexical_drop_postings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lexical_postings
    WHERE project_id = OLD.project_id AND term = ANY(OLD.vocabulary)
      AND document_id = OLD.document_id;
    RETURN OLD;
END
$$;

DROP INDEX lexical_postings_document_idx;
