-- What a project's stored terms cover, kept by the database (#28): per configuration and
-- language, how many documents have stored terms and their passage and term counts. A large
-- project's search summed lexical_documents for this on every search, a row per document
-- (59 ms at 142,857 documents); now it reads a row per language. A deferred constraint
-- trigger keeps the sums at commit, so two ingests into one project hold the project's row
-- only for the moment of their commits, not for the whole of their writes.

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
    AFTER INSERT OR UPDATE OR DELETE ON lexical_documents
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION lexical_count_document();

-- The sums of the documents whose terms are already stored.
INSERT INTO lexical_project_stats (project_id, config, language, documents, passages, terms)
SELECT project_id, config, language, count(*), sum(passages), sum(terms)
FROM lexical_documents GROUP BY project_id, config, language;
