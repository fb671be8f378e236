-- The current schema in full: equal to every migration applied in order (tests/integration/test_migrations.py checks).
-- Users, their API tokens, their projects, and the documents in them.

CREATE TABLE users (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name        text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_name_key ON users (lower(btrim(name)));

-- Only a SHA-256 of each token is stored; the token itself is shown once. A 'read' token may
-- search, list and read but change nothing.
CREATE TABLE api_tokens (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash  bytea NOT NULL UNIQUE,
    prefix      text NOT NULL,
    label       text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz,
    scope       text NOT NULL DEFAULT 'write' CHECK (scope IN ('read', 'write'))
);
CREATE INDEX api_tokens_user_id_idx ON api_tokens (user_id);

CREATE TABLE projects (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name        text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX projects_user_name_key ON projects (user_id, lower(btrim(name)));

-- An upload grant the service issued; a document can only be registered from one.
CREATE TABLE uploads (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id    uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    user_id       uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    filename      text NOT NULL,
    content_type  text NOT NULL,
    size_bytes    bigint NOT NULL CHECK (size_bytes > 0),
    object_key    text NOT NULL UNIQUE,
    expires_at    timestamptz NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    consumed_at   timestamptz,
    -- S3 multipart uploads: the store's id of the upload and the part size the grant planned.
    multipart_id     text,
    part_size_bytes  bigint CHECK (part_size_bytes > 0),
    -- When the document registered from it was deleted: the grant is withdrawn.
    revoked_at    timestamptz,
    CONSTRAINT uploads_multipart_check CHECK ((multipart_id IS NULL) = (part_size_bytes IS NULL))
);
CREATE INDEX uploads_project_id_idx ON uploads (project_id);
CREATE INDEX uploads_sweepable_expires_at_idx ON uploads (expires_at)
    WHERE consumed_at IS NULL OR revoked_at IS NOT NULL;

-- Time-ordered ids for documents (022_time_ordered_document_ids.sql): UUID version 7, so a
-- new document's postings go to the end of each term's part of the index, not a random page.
CREATE FUNCTION shortlist_uuid_v7() RETURNS uuid
LANGUAGE sql VOLATILE PARALLEL SAFE
RETURN encode(
    set_bit(set_bit(
        overlay(uuid_send(gen_random_uuid())
                PLACING substring(int8send(floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint) FROM 3)
                FROM 1 FOR 6),
        52, 1), 53, 1),
    'hex')::uuid;

-- One row per document: its whole extracted text lives here (TOASTed), once.
CREATE TABLE documents (
    id             uuid PRIMARY KEY DEFAULT shortlist_uuid_v7(),
    project_id     uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    name           text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 1000),
    content_type   text NOT NULL,
    size_bytes     bigint NOT NULL CHECK (size_bytes >= 0),
    object_key     text,
    status         text NOT NULL DEFAULT 'pending'
                   CHECK (status IN ('pending', 'processing', 'ready', 'error')),
    error_code     text,
    error_message  text,
    kind           text,
    page_count     integer,
    pages_done     integer CHECK (pages_done >= 0),
    pages_total    integer CHECK (pages_total >= 0),
    markdown       text,
    content_hash   text,
    warnings       text[] NOT NULL DEFAULT '{}',
    attempts       integer NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    extracted_at   timestamptz,
    source_url     text CHECK (length(source_url) <= 2048),
    ocr_pages      integer[] NOT NULL DEFAULT '{}',
    -- Kept by `shortlist sync`: the file's path under the synced folder, its bytes' SHA-256,
    -- and the size and mtime it had when last read.
    sync_path       text CHECK (length(sync_path) <= 4096),
    original_sha256 text CHECK (length(original_sha256) = 64),
    sync_size       bigint,
    sync_mtime_ns   bigint,
    -- The figures of its PDF pages: [{page, box, caption, label}] (013_document_figures.sql).
    figures         jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(figures) = 'array'),
    -- Where its OCR'd pages' recognised lines sit: [{page, box, text}] (014_ocr_lines.sql).
    ocr_lines       jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(ocr_lines) = 'array'),
    CHECK (status <> 'ready' OR (markdown IS NOT NULL AND content_hash IS NOT NULL)),
    CHECK (status <> 'error' OR error_code IS NOT NULL)
);
CREATE UNIQUE INDEX documents_project_name_key ON documents (project_id, lower(btrim(name)));
CREATE INDEX documents_project_status_idx ON documents (project_id, status);
CREATE UNIQUE INDEX documents_project_sync_path_key ON documents (project_id, sync_path)
    WHERE sync_path IS NOT NULL;

-- The lexical prefilter (011_lexical_prefilter.sql, #28).
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
    -- Its postings' distinct terms, written with the row: deleting the row deletes a
    -- primary-key range of postings per term (023_lexical_vocabulary.sql).
    vocabulary    text[] NOT NULL,
    -- The language its text is written in, as detected (its stemmer's is `language`: English
    -- for a text in Chinese), so that a search does not detect it again; NULL only in rows
    -- stored before 025_lexical_written_language.sql, until the backfill fills it in.
    written_language text,
    -- Where each of its chunks lies, [[start, end, first page, last page, heading, prefix]],
    -- so that a search slices its passages rather than chunking it again; NULL only in rows
    -- stored before 026_lexical_passage_layout.sql, until the backfill fills it in.
    passage_layout jsonb CHECK (jsonb_typeof(passage_layout) = 'array'),
    PRIMARY KEY (project_id, document_id)
);
CREATE INDEX lexical_documents_document_idx ON lexical_documents (document_id);
CREATE INDEX lexical_documents_unwritten_idx ON lexical_documents (document_id)
    WHERE written_language IS NULL;
CREATE INDEX lexical_documents_unlaid_idx ON lexical_documents (document_id)
    WHERE passage_layout IS NULL;

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

-- A document's postings go with its lexical_documents row (a trigger, not a foreign key:
-- checking one per (term, passage) row made writing them three times slower), found through
-- the primary key by the terms the row lists.
CREATE FUNCTION lexical_drop_postings() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM lexical_postings
    WHERE project_id = OLD.project_id AND term = ANY(OLD.vocabulary)
      AND document_id = OLD.document_id;
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

-- Each term's document frequency per project, kept by statement triggers on lexical_postings
-- (019_lexical_terms.sql, #28).
CREATE TABLE lexical_terms (
    project_id  uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    term        text NOT NULL,
    passages    bigint NOT NULL CHECK (passages >= 0),
    PRIMARY KEY (project_id, term)
);

-- Counts go up and down in term order, so that two transactions writing the same project's
-- common terms wait for each other instead of deadlocking; a count that reaches 0 goes.
CREATE FUNCTION lexical_count_terms() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lexical_terms AS t (project_id, term, passages)
    SELECT project_id, term, count(*) FROM added GROUP BY project_id, term ORDER BY 1, 2
    ON CONFLICT (project_id, term) DO UPDATE SET passages = t.passages + EXCLUDED.passages;
    RETURN NULL;
END
$$;
CREATE TRIGGER lexical_postings_count_terms
    AFTER INSERT ON lexical_postings
    REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION lexical_count_terms();

CREATE FUNCTION lexical_uncount_terms() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM 1 FROM lexical_terms t
    WHERE (t.project_id, t.term) IN (SELECT project_id, term FROM dropped)
    ORDER BY t.project_id, t.term FOR UPDATE;
    UPDATE lexical_terms t SET passages = t.passages - d.passages
    FROM (SELECT project_id, term, count(*) AS passages FROM dropped GROUP BY 1, 2) d
    WHERE t.project_id = d.project_id AND t.term = d.term;
    DELETE FROM lexical_terms t
    WHERE t.passages = 0 AND (t.project_id, t.term) IN (SELECT project_id, term FROM dropped);
    RETURN NULL;
END
$$;
CREATE TRIGGER lexical_postings_uncount_terms
    AFTER DELETE ON lexical_postings
    REFERENCING OLD TABLE AS dropped
    FOR EACH STATEMENT EXECUTE FUNCTION lexical_uncount_terms();

-- Each posting's BM25 impact: a large project's search reads each query term's best postings
-- first (020_lexical_impact.sql, #28), those at or above the floor from an index of their own,
-- the rest only where those are too few (024_lexical_impact_floor.sql).
CREATE FUNCTION lexical_impact(tf integer, length integer) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN (tf / (tf + 1.5::float8 * (1 - 0.75::float8 + 0.75::float8 * length / 115.0::float8)))::real;

CREATE FUNCTION lexical_impact_floor() RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 0.5;

CREATE INDEX lexical_postings_impact_idx
    ON lexical_postings (project_id, term, lexical_impact(tf, length) DESC)
    INCLUDE (document_id, passage, tf, length)
    WHERE lexical_impact(tf, length) >= lexical_impact_floor();

CREATE FUNCTION lexical_best_postings(project uuid, wanted text, depth integer)
RETURNS TABLE (document_id uuid, passage integer, tf integer, length integer)
LANGUAGE sql STABLE PARALLEL SAFE
AS $$
    SELECT * FROM (
        (SELECT p.document_id, p.passage, p.tf, p.length FROM lexical_postings p
         WHERE p.project_id = project AND p.term = wanted
           AND lexical_impact(p.tf, p.length) >= lexical_impact_floor()
         ORDER BY lexical_impact(p.tf, p.length) DESC
         LIMIT depth)
        UNION ALL
        (SELECT p.document_id, p.passage, p.tf, p.length FROM lexical_postings p
         WHERE p.project_id = project AND p.term = wanted
           AND lexical_impact(p.tf, p.length) < lexical_impact_floor()
         ORDER BY lexical_impact(p.tf, p.length) DESC
         LIMIT depth)
    ) best
    LIMIT depth
$$;

-- What a project's stored terms cover, per configuration and language, kept at commit by a
-- deferred trigger (021_lexical_project_stats.sql, #28).
CREATE TABLE lexical_project_stats (
    project_id  uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    config      text NOT NULL,
    language    text NOT NULL,
    documents   bigint NOT NULL CHECK (documents >= 0),
    passages    bigint NOT NULL CHECK (passages >= 0),
    terms       bigint NOT NULL CHECK (terms >= 0),
    PRIMARY KEY (project_id, config, language)
);

CREATE FUNCTION lexical_count_document() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        UPDATE lexical_project_stats
        SET documents = documents - 1, passages = passages - OLD.passages,
            terms = terms - OLD.terms
        WHERE project_id = OLD.project_id AND config = OLD.config AND language = OLD.language;
        DELETE FROM lexical_project_stats
        WHERE project_id = OLD.project_id AND config = OLD.config AND language = OLD.language
          AND documents = 0;
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        INSERT INTO lexical_project_stats AS s
            (project_id, config, language, documents, passages, terms)
        SELECT NEW.project_id, NEW.config, NEW.language, 1, NEW.passages, NEW.terms
        WHERE EXISTS (SELECT 1 FROM projects WHERE id = NEW.project_id)
        ON CONFLICT (project_id, config, language) DO UPDATE
        SET documents = s.documents + 1, passages = s.passages + EXCLUDED.passages,
            terms = s.terms + EXCLUDED.terms;
    END IF;
    RETURN NULL;
END
$$;
CREATE CONSTRAINT TRIGGER lexical_documents_count
    AFTER INSERT OR UPDATE OF project_id, config, language, passages, terms OR DELETE
    ON lexical_documents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION lexical_count_document();

-- Documents an assistant asked for (MCP request_document): logged, never fetched, until the
-- project's owner approves one with an address, which runs a URL import.
CREATE TABLE document_requests (
    id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    project_id       uuid NOT NULL REFERENCES projects (id) ON DELETE CASCADE,
    title            text NOT NULL CHECK (length(btrim(title)) BETWEEN 1 AND 300),
    source_url       text CHECK (length(source_url) <= 2048),
    reason           text NOT NULL DEFAULT '' CHECK (length(reason) <= 2000),
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'approved')),
    times_requested  integer NOT NULL DEFAULT 1 CHECK (times_requested >= 1),
    document_id      uuid REFERENCES documents (id) ON DELETE SET NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX document_requests_pending_title_key
    ON document_requests (project_id, lower(btrim(title))) WHERE status = 'pending';

-- Which of procrastinate's own migration files this database has had (service/queue_schema.py).
CREATE TABLE queue_migrations (
    name        text PRIMARY KEY,
    applied_at  timestamptz NOT NULL DEFAULT now()
);

-- How find_mentions reads text: one definition for documents and terms (018_mention_text.sql).
CREATE FUNCTION mention_text(body text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE RETURNS NULL ON NULL INPUT
RETURN btrim(lower(
    regexp_replace(
        regexp_replace(
            regexp_replace(
                regexp_replace(
                    regexp_replace(
                        regexp_replace(
                            regexp_replace(normalize(body, NFKC),
                                '([[:alnum:]])[-\u00ad\u2010][ \t]*\n\s*([[:alnum:]])', '\1\2', 'g'),
                            '<[^<>]*>', ' ', 'g'),
                        '\*\*|~~|`', '', 'g'),
                    '(^|[^[:alnum:]_])_+|_+([^[:alnum:]_]|$)', '\1\2', 'g'),
                '\\([^[:alnum:][:space:]])', '\1', 'g'),
            '\s+', ' ', 'g'),
        '([\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]) (?=[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff])',
        '\1', 'g')
));
