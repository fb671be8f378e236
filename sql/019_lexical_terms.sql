-- Each term's document frequency per project, kept by the database (#28): how many stored
-- passages of the project hold the term. A large project's search read it by counting the
-- term's postings at query time, which is linear in the project (20-95 ms of a search's
-- ~170 ms of database time at 100,000 passages, more at a million); now it reads one row a
-- term. Statement triggers on lexical_postings keep the counts in the transaction that writes
-- or drops the postings, whoever writes them (the worker's save, the backfill, a bulk load),
-- so a count can never describe postings that are not there. project_id leads the key, as
-- everywhere in the prefilter (docs/deploy.md: one project's rows on one shard).

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

-- The counts of the postings already stored (one pass over them; the triggers keep them from
-- here on).
INSERT INTO lexical_terms (project_id, term, passages)
SELECT project_id, term, count(*) FROM lexical_postings GROUP BY project_id, term;
