-- Each posting's BM25 impact in an index of its own (#28), so that a large project's search
-- reads the best few thousand passages of each query term instead of all of them.
--
-- lexical_impact is Lucene's BM25 term saturation, tf / (tf + k1 (1 - b + b length / L)), at
-- the k1 and b every search uses (retrieval.shortlist.DEFAULT_K1, DEFAULT_B) and a reference
-- passage length L of 115 terms (SciFact's mean at the default chunk size; a project's own
-- mean only moves the order of postings of about equal weight). Only the order matters: the
-- search scores what it reads with the project's own mean length, then scores its best
-- candidates exactly over every query term (service/services/prefilter.py,
-- tests/integration/search/test_lexical_prefilter.py checks the constants against Python's).
CREATE FUNCTION lexical_impact(tf integer, length integer) RETURNS real
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT
RETURN (tf / (tf + 1.5 * (1 - 0.75 + 0.75 * length / 115.0)))::real;

CREATE INDEX lexical_postings_impact_idx
    ON lexical_postings (project_id, term, lexical_impact(tf, length) DESC)
    INCLUDE (document_id, passage, tf, length);
