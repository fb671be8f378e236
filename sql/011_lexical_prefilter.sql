-- The lexical prefilter (#28): every ready document's passages as BM25 terms, stored so that
-- PostgreSQL ranks a large project's passages with the same BM25 the in-process shortlist
-- computes (service/services/prefilter.py). Rows are written in the transaction that stores
-- the document's text; the trigger below drops them in the transaction that changes it, so
-- they can never describe text a document no longer has. project_id leads every key, so a
-- distributed PostgreSQL (Citus) can place a project's rows on one shard (docs/deploy.md).

-- One row per document whose passages are stored: what its terms were made with (a change
-- of chunker, chunk size or tokenizer makes them stale: the backfill writes them again).
CREATE TABLE lexical_documents (
    project_id    uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    document_id   uuid NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    content_hash  text NOT NULL,
    config        text NOT NULL,
    language      text NOT NULL,
    passages      integer NOT NULL CHECK (passages >= 0),
    terms         bigint NOT NULL CHECK (terms >= 0),
    PRIMARY KEY (project_id, document_id)
);
CREATE INDEX lexical_documents_document_idx ON lexical_documents (document_id);

-- One row per (term, passage): the term's frequency in the passage and the passage's length
-- in terms, read by an index-only scan of the primary key for the query's terms.
CREATE TABLE lexical_postings (
    project_id   uuid NOT NULL,
    term         text NOT NULL,
    document_id  uuid NOT NULL,
    passage      integer NOT NULL,
    tf           integer NOT NULL CHECK (tf > 0),
    length       integer NOT NULL CHECK (length > 0),
    PRIMARY KEY (project_id, term, document_id, passage) INCLUDE (tf, length)
) WITH (
    -- Searches read the primary key alone (an index-only scan) only where the visibility map
    -- says so, and plan well only with current statistics: vacuum and analyze after every 2 %
    -- of new rows, not the default 20 %, since rows arrive in bulk and are never updated.
    autovacuum_vacuum_insert_scale_factor = 0.02,
    autovacuum_analyze_scale_factor = 0.02
);
CREATE INDEX lexical_postings_document_idx ON lexical_postings (project_id, document_id);

-- A document's postings go with its lexical_documents row (a trigger, not a foreign key:
-- checking one per (term, passage) row made writing them three times slower).
CREATE FUNCTION lexical_drop_postings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lexical_postings
    WHERE project_id = OLD.project_id AND document_id = OLD.document_id;
    RETURN OLD;
END
$$;
CREATE TRIGGER lexical_documents_drop_postings
    AFTER DELETE ON lexical_documents
    FOR EACH ROW EXECUTE FUNCTION lexical_drop_postings();

-- A ready document whose text, status or project changes loses its stored terms at once.
CREATE FUNCTION lexical_forget() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lexical_documents WHERE project_id = OLD.project_id AND document_id = OLD.id;
    RETURN NEW;
END
$$;
CREATE TRIGGER documents_lexical_forget
    AFTER UPDATE OF status, content_hash, project_id ON documents
    FOR EACH ROW
    WHEN (OLD.status = 'ready' AND (NEW.status <> 'ready'
          OR NEW.content_hash IS DISTINCT FROM OLD.content_hash
          OR NEW.project_id <> OLD.project_id))
    EXECUTE FUNCTION lexical_forget();
