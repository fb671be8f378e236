-- Only a posting of some weight goes into the impact index (#28).
--
-- lexical_postings_impact_idx (020_lexical_impact.sql) held every posting: the second btree
-- entry each one paid for, written at a random place in its term's range (the primary key's
-- go at the end of it, document ids being time-ordered), and about half of what PostgreSQL
-- spent writing a document's terms (bench/postings_write.py --before 23: 5.2-5.6 ms a
-- document before this migration, 3.1-3.2 after). It serves one read: a term's best postings, when a search of a large project
-- reads only the first few thousand of a common term's (service/services/prefilter.py,
-- term_depth). Most postings are a word seen once in a passage of ordinary length, which such
-- a read reaches last, so the index now holds only those at or above lexical_impact_floor():
-- a word seen once in a passage of up to 63 terms, twice in one of up to 166, three times in
-- one of up to 268, and so on: about a quarter of the postings of SciFact's passages.
--
-- lexical_best_postings reads a term's best postings as before, exactly: those over the floor
-- from the index, best first, and only where they are fewer than asked for, the rest of the
-- term's from the primary key, best first (a read of that term's postings, bounded by its
-- count, as for a term no deeper than the depth). Searches call it (lexical_top_passages_by_
-- impact in sql/queries.sql); the planner proves the index's predicate from its first
-- branch's, both calling the same two immutable functions.

DROP INDEX lexical_postings_impact_idx;

-- The same formula in double precision: numeric arithmetic cost about a microsecond an
-- evaluation (docs/benchmarks.md), paid for every posting written and, now, for every one a
-- read under the floor looks at.
CREATE OR REPLACE FUNCTION lexical_impact(tf integer, length integer) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN (tf / (tf + 1.5::float8 * (1 - 0.75::float8 + 0.75::float8 * length / 115.0::float8)))::real;

CREATE FUNCTION lexical_impact_floor() RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 0.5;

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

CREATE INDEX lexical_postings_impact_idx
    ON lexical_postings (project_id, term, lexical_impact(tf, length) DESC)
    INCLUDE (document_id, passage, tf, length)
    WHERE lexical_impact(tf, length) >= lexical_impact_floor();
