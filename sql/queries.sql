-- insert_user --
-- Create a user
INSERT INTO users (name) VALUES (btrim(%(name)s))
RETURNING id, name, created_at;

-- fetch_user_by_name --
-- Find a user by name, compared case-insensitively
SELECT id, name, created_at FROM users WHERE lower(btrim(name)) = lower(btrim(%(name)s));

-- list_users --
-- Every user, oldest first
SELECT id, name, created_at FROM users ORDER BY created_at, name;

-- insert_api_token --
-- Store a new token's hash
INSERT INTO api_tokens (user_id, token_hash, prefix, label, scope)
VALUES (%(user_id)s, %(token_hash)s, %(prefix)s, %(label)s, %(scope)s)
RETURNING id, user_id, prefix, label, scope, created_at, revoked_at;

-- fetch_principal_by_token_hash --
-- The live token with this hash and its user
SELECT t.id AS token_id, t.token_hash, t.scope, u.id AS user_id, u.name AS user_name
FROM api_tokens t JOIN users u ON u.id = t.user_id
WHERE t.token_hash = %(token_hash)s AND t.revoked_at IS NULL;

-- list_api_tokens --
-- A user's tokens, newest first
SELECT id, user_id, prefix, label, scope, created_at, revoked_at
FROM api_tokens WHERE user_id = %(user_id)s ORDER BY created_at DESC;

-- revoke_api_tokens_by_prefix --
-- Revoke the live tokens whose prefix (or id) matches
UPDATE api_tokens SET revoked_at = now()
WHERE revoked_at IS NULL AND (prefix = %(prefix)s OR id::text = %(prefix)s)
RETURNING id, user_id, prefix, label, scope, created_at, revoked_at;

-- insert_project --
-- Create a project for a user
INSERT INTO projects (user_id, name) VALUES (%(user_id)s, btrim(%(name)s))
RETURNING id, user_id, name, created_at;

-- list_projects --
-- A user's projects with their document counts
SELECT p.id, p.user_id, p.name, p.created_at,
       count(d.id) AS document_count,
       count(d.id) FILTER (WHERE d.status = 'ready') AS ready_count
FROM projects p LEFT JOIN documents d ON d.project_id = p.id
WHERE p.user_id = %(user_id)s
GROUP BY p.id ORDER BY p.created_at, p.name;

-- fetch_project --
-- One of a user's projects, by id, with its document counts (one scan of its documents' status index for both: every search reads them)
SELECT p.id, p.user_id, p.name, p.created_at, c.document_count, c.ready_count
FROM projects p CROSS JOIN LATERAL (
    SELECT count(*) AS document_count, count(*) FILTER (WHERE d.status = 'ready') AS ready_count
    FROM documents d WHERE d.project_id = p.id
) c
WHERE p.id = %(project_id)s AND p.user_id = %(user_id)s;

-- fetch_project_by_name --
-- One of a user's projects, by name compared case-insensitively, with its document counts (as fetch_project)
SELECT p.id, p.user_id, p.name, p.created_at, c.document_count, c.ready_count
FROM projects p CROSS JOIN LATERAL (
    SELECT count(*) AS document_count, count(*) FILTER (WHERE d.status = 'ready') AS ready_count
    FROM documents d WHERE d.project_id = p.id
) c
WHERE lower(btrim(p.name)) = lower(btrim(%(name)s)) AND p.user_id = %(user_id)s;

-- fetch_document_by_name --
-- A project's document with this name, compared case-insensitively and trimmed
SELECT id FROM documents
WHERE project_id = %(project_id)s AND lower(btrim(name)) = lower(btrim(%(name)s));

-- find_taken_document_names --
-- Which of these names a project's documents already have, compared as fetch_document_by_name does
SELECT n AS name FROM unnest(%(names)s::text[]) AS n
WHERE EXISTS (SELECT 1 FROM documents
              WHERE project_id = %(project_id)s AND lower(btrim(name)) = lower(btrim(n)));

-- insert_upload --
-- Record an upload grant before handing it out
INSERT INTO uploads (id, project_id, user_id, filename, content_type, size_bytes, object_key,
                     expires_at, multipart_id, part_size_bytes)
VALUES (%(id)s, %(project_id)s, %(user_id)s, %(filename)s, %(content_type)s, %(size_bytes)s,
        %(object_key)s, %(expires_at)s, %(multipart_id)s, %(part_size_bytes)s)
RETURNING *;

-- fetch_upload_for_update --
-- One of the user's uploads into a project, locked until the transaction ends
SELECT * FROM uploads
WHERE id = %(upload_id)s AND project_id = %(project_id)s AND user_id = %(user_id)s
FOR UPDATE;

-- fetch_upload_revocation --
-- Whether the upload grant for a blob key was withdrawn (no row: the store's own checks decide)
SELECT revoked_at FROM uploads WHERE object_key = %(object_key)s;

-- consume_upload --
-- Mark an upload as registered
UPDATE uploads SET consumed_at = now() WHERE id = %(upload_id)s;

-- lock_abandoned_uploads --
-- Grants never registered, or withdrawn, long after they expired, locked (skipping any being registered now)
SELECT * FROM uploads
WHERE (consumed_at IS NULL OR revoked_at IS NOT NULL)
  AND expires_at < now() - make_interval(secs => %(after_seconds)s)
ORDER BY expires_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED;

-- delete_upload --
-- Forget an upload grant
DELETE FROM uploads WHERE id = %(upload_id)s;

-- insert_document --
-- Create a document row, pending extraction; for a synced file, with what the sync saw of it
-- (sync_path, original_sha256, sync_size, sync_mtime_ns; NULL otherwise) in the same statement
INSERT INTO documents (project_id, name, content_type, size_bytes, object_key, status,
                       sync_path, original_sha256, sync_size, sync_mtime_ns)
VALUES (%(project_id)s, btrim(%(name)s), %(content_type)s, %(size_bytes)s, %(object_key)s, %(status)s,
        %(sync_path)s, %(original_sha256)s, %(sync_size)s, %(sync_mtime_ns)s)
RETURNING id, project_id, name, content_type, size_bytes, object_key, status, error_code,
          error_message, kind, page_count, pages_done, pages_total, content_hash, warnings, attempts, created_at,
          updated_at, extracted_at, ocr_pages, sync_path, original_sha256, sync_size, sync_mtime_ns;

-- list_documents --
-- A project's documents with metadata (no text; for a pending one, the extractions ahead of it), newest first
SELECT d.id, d.project_id, d.name, d.content_type, d.size_bytes, d.object_key, d.status,
       d.error_code, d.error_message, d.kind, d.page_count, d.pages_done, d.pages_total, d.content_hash, d.warnings,
       d.attempts, d.created_at, d.updated_at, d.extracted_at, d.ocr_pages,
       d.sync_path, d.original_sha256, d.sync_size, d.sync_mtime_ns,
       CASE WHEN d.status = 'pending' THEN (
         SELECT count(*) FROM procrastinate_jobs mine, procrastinate_jobs other
         WHERE mine.queueing_lock = 'extract:' || d.id::text AND mine.status = 'todo'
           AND other.queue_name = mine.queue_name
           AND (other.status = 'doing' OR (other.status = 'todo' AND other.id < mine.id))
       ) END AS queued_ahead
FROM documents d JOIN projects p ON p.id = d.project_id
WHERE d.project_id = %(project_id)s AND p.user_id = %(user_id)s
ORDER BY d.created_at DESC, d.name;

-- fetch_document --
-- One of the user's documents with metadata (no text; if pending, the extractions ahead of it)
SELECT d.id, d.project_id, d.name, d.content_type, d.size_bytes, d.object_key, d.status,
       d.error_code, d.error_message, d.kind, d.page_count, d.pages_done, d.pages_total, d.content_hash, d.warnings,
       d.attempts, d.created_at, d.updated_at, d.extracted_at, d.ocr_pages,
       d.sync_path, d.original_sha256, d.sync_size, d.sync_mtime_ns,
       CASE WHEN d.status = 'pending' THEN (
         SELECT count(*) FROM procrastinate_jobs mine, procrastinate_jobs other
         WHERE mine.queueing_lock = 'extract:' || d.id::text AND mine.status = 'todo'
           AND other.queue_name = mine.queue_name
           AND (other.status = 'doing' OR (other.status = 'todo' AND other.id < mine.id))
       ) END AS queued_ahead
FROM documents d JOIN projects p ON p.id = d.project_id
WHERE d.id = %(document_id)s AND p.user_id = %(user_id)s;

-- fetch_document_text --
-- One of the user's documents with its whole Markdown
SELECT d.id, d.name, d.status, d.page_count, d.markdown
FROM documents d JOIN projects p ON p.id = d.project_id
WHERE d.id = %(document_id)s AND p.user_id = %(user_id)s;

-- delete_document --
-- Delete one of the user's documents and withdraw the upload grant it came from, returning where its original was
WITH deleted AS (
    DELETE FROM documents d USING projects p
    WHERE d.id = %(document_id)s AND p.id = d.project_id AND p.user_id = %(user_id)s
    RETURNING d.id, d.object_key
), revoked AS (
    UPDATE uploads u SET revoked_at = now()
    FROM deleted WHERE u.object_key = deleted.object_key
)
SELECT id, object_key FROM deleted;

-- reset_document_for_extraction --
-- Put one of the user's documents back to pending for a new extraction
UPDATE documents d SET status = 'pending', error_code = NULL, error_message = NULL,
       attempts = 0, updated_at = now()
FROM projects p
WHERE d.id = %(document_id)s AND p.id = d.project_id AND p.user_id = %(user_id)s
  AND d.object_key IS NOT NULL
RETURNING d.id;

-- list_ready_document_refs --
-- Id, name, content hash and kind of a project's searchable documents (optionally only some)
SELECT id, name, content_hash, kind FROM documents
WHERE project_id = %(project_id)s AND status = 'ready'
  AND (%(document_ids)s::uuid[] IS NULL OR id = ANY(%(document_ids)s::uuid[]))
ORDER BY created_at, id;

-- list_ready_document_refs_with_terms --
-- A project's searchable documents (optionally only some), oldest first, each with its stored passage terms' counts and languages where they are current
SELECT d.id, d.name, d.content_hash, d.kind, l.passages, l.terms, l.language, l.written_language
FROM documents d LEFT JOIN lexical_documents l
  ON l.project_id = d.project_id AND l.document_id = d.id
 AND l.config = %(config)s AND l.content_hash = d.content_hash
WHERE d.project_id = %(project_id)s AND d.status = 'ready'
  AND (%(document_ids)s::uuid[] IS NULL OR d.id = ANY(%(document_ids)s::uuid[]))
ORDER BY d.created_at, d.id;

-- fetch_document_figures --
-- The figures of the given documents that have any (a search's results, a figure's picture)
SELECT id, figures FROM documents
WHERE id = ANY(%(document_ids)s::uuid[]) AND status = 'ready' AND figures <> '[]'::jsonb;

-- fetch_document_ocr_lines --
-- The recognised lines of one page of one of the user's documents
SELECT line FROM documents d JOIN projects p ON p.id = d.project_id,
     jsonb_array_elements(d.ocr_lines) AS line
WHERE d.id = %(document_id)s AND p.user_id = %(user_id)s AND (line ->> 'page')::int = %(page)s;

-- fetch_documents_markdown --
-- The Markdown of the given documents, for the in-memory chunk cache, each with its chunks' layout where one is stored for this text and the cache's configuration
SELECT d.id, d.project_id, d.name, d.content_hash, d.markdown, l.passage_layout
FROM documents d LEFT JOIN lexical_documents l
  ON l.project_id = d.project_id AND l.document_id = d.id
 AND l.config = %(config)s AND l.content_hash = d.content_hash
WHERE d.id = ANY(%(document_ids)s::uuid[]) AND d.status = 'ready';

-- list_recent_ready_documents --
-- The most recently extracted searchable documents, for warming caches at start-up, each with its chunks' layout where one is stored for this text and the cache's configuration
SELECT d.id, d.project_id, d.name, d.content_hash, d.markdown, d.extracted_at, l.passage_layout
FROM documents d LEFT JOIN lexical_documents l
  ON l.project_id = d.project_id AND l.document_id = d.id
 AND l.config = %(config)s AND l.content_hash = d.content_hash
WHERE d.status = 'ready' ORDER BY d.extracted_at DESC NULLS LAST LIMIT %(limit)s;

-- claim_document_for_extraction --
-- Mark a document as being extracted, counting the attempt; nothing if it is gone
UPDATE documents SET status = 'processing', attempts = attempts + 1, pages_done = NULL,
       pages_total = NULL, updated_at = now()
WHERE id = %(document_id)s AND status IN ('pending', 'processing')
RETURNING id, name, content_type, size_bytes, object_key, attempts, source_url;

-- record_extraction_progress --
-- Note how many of a document's pages the extractor has read (while it is being extracted)
UPDATE documents SET pages_done = %(pages_done)s, pages_total = %(pages_total)s
WHERE id = %(document_id)s AND status = 'processing';

-- store_extraction --
-- Save a successful extraction: the whole Markdown, once, and the type of the kind found
UPDATE documents SET status = 'ready', markdown = %(markdown)s, content_hash = %(content_hash)s,
       kind = %(kind)s, content_type = %(content_type)s, page_count = %(page_count)s,
       warnings = %(warnings)s, ocr_pages = %(ocr_pages)s, figures = %(figures)s,
       ocr_lines = %(ocr_lines)s,
       error_code = NULL, error_message = NULL, extracted_at = now(), updated_at = now()
WHERE id = %(document_id)s AND status = 'processing'
RETURNING id, project_id, content_hash;

-- notify_documents_ready --
-- Announce on a channel, one notification each, that documents' extractions were saved (payload: the id)
SELECT pg_notify(%(channel)s, id) FROM unnest(%(document_ids)s::text[]) AS id;

-- store_extraction_error --
-- Save why a document cannot be searched
UPDATE documents SET status = 'error', error_code = %(error_code)s, error_message = %(error_message)s,
       markdown = NULL, content_hash = NULL, ocr_pages = '{}', figures = '[]',
       ocr_lines = '[]', updated_at = now()
WHERE id = %(document_id)s AND status IN ('pending', 'processing')
RETURNING id;

-- list_unqueued_pending_documents --
-- Pending documents with no live extraction job (their job was lost), older than a grace period
SELECT d.id FROM documents d
WHERE d.status IN ('pending', 'processing')
  AND d.updated_at < now() - make_interval(secs => %(grace_seconds)s)
  AND NOT EXISTS (
      SELECT 1 FROM procrastinate_jobs j
      WHERE j.queueing_lock = 'extract:' || d.id::text AND j.status IN ('todo', 'doing')
  );

-- insert_ingested_document --
-- Create a document row already claimed for extraction (the CLI's direct path); for a synced
-- file, with what the sync saw of it in the same statement (NULL otherwise)
INSERT INTO documents (project_id, name, content_type, size_bytes, object_key, status, attempts,
                       sync_path, original_sha256, sync_size, sync_mtime_ns)
VALUES (%(project_id)s, btrim(%(name)s), %(content_type)s, %(size_bytes)s, %(object_key)s, 'processing', 1,
        %(sync_path)s, %(original_sha256)s, %(sync_size)s, %(sync_mtime_ns)s)
RETURNING id, project_id, name, content_type, size_bytes, object_key, status, error_code,
          error_message, kind, page_count, pages_done, pages_total, content_hash, warnings, attempts, created_at,
          updated_at, extracted_at, ocr_pages, sync_path, original_sha256, sync_size, sync_mtime_ns;

-- insert_ingested_documents --
-- Create several documents claimed for extraction in one statement (`shortlist ingest`'s small files); a row whose name is taken, in the project or by an earlier row, is skipped (the rows returned are those created), so one file's clash fails no other
INSERT INTO documents (project_id, name, content_type, size_bytes, object_key, status, attempts)
SELECT %(project_id)s, btrim(f.name), f.content_type, f.size_bytes, f.object_key, 'processing', 1
FROM unnest(%(names)s::text[], %(content_types)s::text[], %(sizes)s::bigint[], %(object_keys)s::text[])
     WITH ORDINALITY AS f(name, content_type, size_bytes, object_key, position)
ORDER BY f.position
ON CONFLICT DO NOTHING
RETURNING id, project_id, name, content_type, size_bytes, object_key, status, error_code,
          error_message, kind, page_count, pages_done, pages_total, content_hash, warnings, attempts, created_at,
          updated_at, extracted_at, ocr_pages, sync_path, original_sha256, sync_size, sync_mtime_ns;

-- insert_imported_document --
-- Create a pending document whose original is still at a web address (a worker fetches it)
INSERT INTO documents (project_id, name, content_type, size_bytes, object_key, status, source_url)
VALUES (%(project_id)s, btrim(%(name)s), %(content_type)s, 0, %(object_key)s, 'pending', %(source_url)s)
RETURNING id, project_id, name, content_type, size_bytes, object_key, status, error_code,
          error_message, kind, page_count, pages_done, pages_total, content_hash, warnings, attempts, created_at,
          updated_at, extracted_at;

-- store_fetched_original --
-- Record what a fetch brought for an imported document: its size and content type
UPDATE documents SET size_bytes = %(size_bytes)s, content_type = %(content_type)s, updated_at = now()
WHERE id = %(document_id)s;

-- count_mentions --
-- Per ready document of a project and per term: occurrences and pages (both read through mention_text)
WITH terms AS (
    SELECT mention_text(t.term) AS term, t.ord
    FROM unnest(%(terms)s::text[]) WITH ORDINALITY AS t(term, ord)
),
docs AS (
    SELECT d.id, d.name, d.markdown,
           mention_text(regexp_replace(d.markdown, '<!-- page \d+ -->', ' ', 'g')) AS flat,
           ARRAY(SELECT m[1]::int FROM regexp_matches(d.markdown, '<!-- page (\d+) -->', 'g') AS m)
               AS page_numbers
    FROM documents d
    WHERE d.project_id = %(project_id)s AND d.status = 'ready'
),
page_texts AS (
    SELECT docs.id, coalesce(docs.page_numbers[p.ord - 1], 1) AS page,
           mention_text(p.piece) AS flat
    FROM docs, regexp_split_to_table(docs.markdown, '<!-- page \d+ -->') WITH ORDINALITY AS p(piece, ord)
),
found_pages AS (
    SELECT pt.id, terms.ord, array_agg(DISTINCT pt.page ORDER BY pt.page) AS pages
    FROM page_texts pt JOIN terms ON terms.term <> '' AND strpos(pt.flat, terms.term) > 0
    GROUP BY pt.id, terms.ord
)
SELECT docs.id AS document_id, docs.name AS document_name, terms.ord AS term_index,
       CASE WHEN terms.term = '' THEN 0
            ELSE (length(docs.flat) - length(replace(docs.flat, terms.term, ''))) / length(terms.term)
       END AS count,
       coalesce(fp.pages, '{}'::int[]) AS pages
FROM docs CROSS JOIN terms
LEFT JOIN found_pages fp ON fp.id = docs.id AND fp.ord = terms.ord
ORDER BY lower(docs.name), docs.id, terms.ord;

-- join_pending_document_request --
-- Count one more ask for a project's pending request with this title (compared case-insensitively)
UPDATE document_requests
SET times_requested = times_requested + 1,
    source_url = coalesce(source_url, %(source_url)s),
    updated_at = now()
WHERE project_id = %(project_id)s AND status = 'pending'
  AND lower(btrim(title)) = lower(btrim(%(title)s))
RETURNING id, project_id, title, source_url, reason, status, times_requested, document_id,
          created_at, updated_at;

-- insert_document_request --
-- Log a new request unless the project already has max_pending pending ones (a racing twin joins)
INSERT INTO document_requests (project_id, title, source_url, reason)
SELECT %(project_id)s, btrim(%(title)s), %(source_url)s, %(reason)s
WHERE (SELECT count(*) FROM document_requests
       WHERE project_id = %(project_id)s AND status = 'pending') < %(max_pending)s
ON CONFLICT (project_id, lower(btrim(title))) WHERE status = 'pending'
DO UPDATE SET times_requested = document_requests.times_requested + 1, updated_at = now()
RETURNING id, project_id, title, source_url, reason, status, times_requested, document_id,
          created_at, updated_at;

-- list_document_requests --
-- One of the user's projects' requests, pending first, then newest first
SELECT r.id, r.project_id, r.title, r.source_url, r.reason, r.status, r.times_requested,
       r.document_id, r.created_at, r.updated_at
FROM document_requests r JOIN projects p ON p.id = r.project_id
WHERE r.project_id = %(project_id)s AND p.user_id = %(user_id)s
ORDER BY r.status = 'pending' DESC, r.updated_at DESC, r.id;

-- fetch_document_request --
-- One request of one of the user's projects
SELECT r.id, r.project_id, r.title, r.source_url, r.reason, r.status, r.times_requested,
       r.document_id, r.created_at, r.updated_at
FROM document_requests r JOIN projects p ON p.id = r.project_id
WHERE r.id = %(request_id)s AND r.project_id = %(project_id)s AND p.user_id = %(user_id)s;

-- claim_document_request_for_approval --
-- Mark a pending request approved (before its import runs); nothing if it is not pending
UPDATE document_requests SET status = 'approved', updated_at = now()
WHERE id = %(request_id)s AND project_id = %(project_id)s AND status = 'pending'
RETURNING id;

-- release_document_request --
-- Put a request whose import was refused back to pending
UPDATE document_requests SET status = 'pending', updated_at = now()
WHERE id = %(request_id)s AND status = 'approved' AND document_id IS NULL;

-- link_document_request --
-- Record the document an approved request's import created
UPDATE document_requests SET document_id = %(document_id)s, updated_at = now()
WHERE id = %(request_id)s
RETURNING id, project_id, title, source_url, reason, status, times_requested, document_id,
          created_at, updated_at;

-- list_synced_documents --
-- A project's documents kept by `shortlist sync`, with what the last sync saw of each file
SELECT id, name, status, error_code, error_message, sync_path, original_sha256, sync_size,
       sync_mtime_ns
FROM documents WHERE project_id = %(project_id)s AND sync_path IS NOT NULL
ORDER BY sync_path;

-- move_synced_document --
-- A synced file moved or renamed with the same bytes: the document follows it, extraction kept
UPDATE documents SET sync_path = %(sync_path)s, name = btrim(%(name)s), sync_size = %(sync_size)s,
       sync_mtime_ns = %(sync_mtime_ns)s, updated_at = now()
WHERE id = %(document_id)s;

-- replace_synced_original --
-- A synced file's bytes changed: point at the new original, claimed for extraction again
UPDATE documents SET object_key = %(object_key)s, content_type = %(content_type)s,
       size_bytes = %(size_bytes)s, original_sha256 = %(original_sha256)s,
       sync_size = %(sync_size)s, sync_mtime_ns = %(sync_mtime_ns)s,
       status = 'processing', attempts = 1, error_code = NULL, error_message = NULL,
       updated_at = now()
WHERE id = %(document_id)s
RETURNING id;

-- replace_document_original --
-- A finished upload becomes a document's new original: pending extraction again, the sync
-- record (when given) following the file
UPDATE documents SET object_key = %(object_key)s, content_type = %(content_type)s,
       size_bytes = %(size_bytes)s, original_sha256 = %(original_sha256)s,
       sync_path = coalesce(%(sync_path)s, sync_path),
       sync_size = %(sync_size)s, sync_mtime_ns = %(sync_mtime_ns)s,
       status = 'pending', attempts = 0, error_code = NULL, error_message = NULL,
       updated_at = now()
WHERE id = %(document_id)s
RETURNING id;

-- fetch_document_object_key --
-- Where a document's original is in the blob store (before it is replaced)
SELECT object_key FROM documents WHERE id = %(document_id)s;

-- count_queued_jobs --
-- Jobs of one queue by status (todo, doing, …), for the extraction queue depth metric
SELECT status::text AS status, count(*) AS jobs FROM procrastinate_jobs
WHERE queue_name = %(queue)s AND status IN ('todo', 'doing')
GROUP BY status;

-- rename_imported_document --
-- An imported document named from its address gets the name its fetched content suggests, unless taken
UPDATE documents d SET name = btrim(%(name)s), updated_at = now()
WHERE d.id = %(document_id)s
  AND NOT EXISTS (
    SELECT 1 FROM documents o
    WHERE o.project_id = d.project_id AND o.id <> d.id
      AND lower(btrim(o.name)) = lower(btrim(%(name)s))
  );

-- forget_lexical_documents --
-- Drop documents' stored passage terms (before writing them anew)
DELETE FROM lexical_documents l USING documents d
WHERE d.id = ANY(%(document_ids)s::uuid[]) AND l.project_id = d.project_id AND l.document_id = d.id;

-- store_lexical_documents --
-- Record that ready documents' passage terms follow (each document's distinct terms joined by spaces: deleting the row deletes its postings by them), with the language each is stemmed in, the one it is written in and its chunks' layout, each if it still has this text (its row locked until commit, so a concurrent change of its text or status waits and then drops them); one row returned per document recorded
INSERT INTO lexical_documents (project_id, document_id, content_hash, config, language, passages, terms, vocabulary, written_language, passage_layout)
SELECT d.project_id, d.id, d.content_hash, %(config)s, t.language, t.passages, t.terms,
       string_to_array(t.vocabulary, ' '), t.written_language, t.passage_layout::jsonb
FROM unnest(%(document_ids)s::uuid[], %(content_hashes)s::text[], %(languages)s::text[],
            %(passages)s::integer[], %(terms)s::bigint[], %(vocabularies)s::text[],
            %(written_languages)s::text[], %(layouts)s::text[])
     AS t(document_id, content_hash, language, passages, terms, vocabulary, written_language,
          passage_layout)
JOIN documents d ON d.id = t.document_id
WHERE d.status = 'ready' AND d.content_hash = t.content_hash
ORDER BY d.id
FOR SHARE OF d
RETURNING project_id, document_id;

-- copy_lexical_postings --
-- Stream a document's (term, passage) rows in
COPY lexical_postings (project_id, term, document_id, passage, tf, length) FROM STDIN;

-- list_documents_without_lexical_terms --
-- Ready documents whose passage terms are missing or were made another way, oldest first
SELECT d.id, d.project_id, d.name, d.content_hash, d.markdown FROM documents d
WHERE d.status = 'ready' AND NOT EXISTS (
    SELECT 1 FROM lexical_documents l
    WHERE l.document_id = d.id AND l.config = %(config)s AND l.content_hash = d.content_hash)
ORDER BY d.extracted_at NULLS FIRST, d.id
LIMIT %(limit)s;

-- list_lexical_documents_without_written_language --
-- Current stored terms' rows that have no written language (stored before migration 025), with the start of each document's text, as much of it as language detection reads
SELECT l.document_id, l.content_hash, left(d.markdown, %(chars)s) AS start
FROM lexical_documents l JOIN documents d ON d.id = l.document_id
WHERE l.written_language IS NULL AND l.config = %(config)s AND l.content_hash = d.content_hash
LIMIT %(limit)s;

-- set_lexical_written_languages --
-- Record the written language of stored terms' rows that had none, each if it is still of that text
UPDATE lexical_documents l SET written_language = t.written_language
FROM unnest(%(document_ids)s::uuid[], %(content_hashes)s::text[], %(written_languages)s::text[])
     AS t(document_id, content_hash, written_language)
WHERE l.document_id = t.document_id AND l.content_hash = t.content_hash
  AND l.config = %(config)s AND l.written_language IS NULL;

-- list_lexical_documents_without_layout --
-- Current stored terms' rows that have no chunk layout (stored before migration 026), with each document's text
SELECT l.document_id, l.content_hash, d.markdown
FROM lexical_documents l JOIN documents d ON d.id = l.document_id
WHERE l.passage_layout IS NULL AND l.config = %(config)s AND l.content_hash = d.content_hash
LIMIT %(limit)s;

-- set_lexical_passage_layouts --
-- Record the chunk layout of stored terms' rows that had none, each if it is still of that text
UPDATE lexical_documents l SET passage_layout = t.passage_layout::jsonb
FROM unnest(%(document_ids)s::uuid[], %(content_hashes)s::text[], %(layouts)s::text[])
     AS t(document_id, content_hash, passage_layout)
WHERE l.document_id = t.document_id AND l.content_hash = t.content_hash
  AND l.config = %(config)s AND l.passage_layout IS NULL;

-- lexical_stats --
-- How many documents are searched, how many of them have current stored terms, their passages and languages (a lexical_documents row is only ever of a ready document with that text: migration 011's trigger and store_lexical_documents' lock)
SELECT (SELECT count(*) FROM documents r
        WHERE r.project_id = %(project_id)s AND r.status = 'ready'
          AND (%(document_ids)s::uuid[] IS NULL OR r.id = ANY(%(document_ids)s::uuid[]))) AS ready,
       count(*) AS documents, coalesce(sum(l.passages), 0)::bigint AS passages,
       coalesce(sum(l.terms), 0)::bigint AS terms,
       coalesce(array_agg(DISTINCT l.language), '{}') AS languages
FROM lexical_documents l
WHERE l.project_id = %(project_id)s AND l.config = %(config)s
  AND (%(document_ids)s::uuid[] IS NULL OR l.document_id = ANY(%(document_ids)s::uuid[]));

-- lexical_project_term_frequencies --
-- How many of the project's stored passages hold each query term (kept by migration 019's triggers: a row a term, where counting the postings is linear in the project)
SELECT term, passages AS df FROM lexical_terms
WHERE project_id = %(project_id)s AND term = ANY(%(terms)s::text[]);

-- lexical_project_stats --
-- What the stored terms cover of a whole project, from migration 021's sums (a row per configuration and language, where lexical_stats reads a row per document), with its ready documents counted unless the caller counted them in this same snapshot (an uncorrelated subquery is run only if COALESCE needs it)
SELECT coalesce(%(ready)s::bigint,
                (SELECT count(*) FROM documents r
                 WHERE r.project_id = %(project_id)s AND r.status = 'ready')) AS ready,
       coalesce(sum(s.documents), 0)::bigint AS documents,
       coalesce(sum(s.passages), 0)::bigint AS passages,
       coalesce(sum(s.terms), 0)::bigint AS terms,
       coalesce(array_agg(s.language ORDER BY s.language), '{}') AS languages
FROM lexical_project_stats s
WHERE s.project_id = %(project_id)s AND s.config = %(config)s;

-- lexical_term_frequencies --
-- How many of the searched passages hold each query term (an index-only count: a search of some of the project's documents)
SELECT term, count(*) AS df FROM lexical_postings
WHERE project_id = %(project_id)s AND term = ANY(%(terms)s::text[])
  AND (%(document_ids)s::uuid[] IS NULL OR document_id = ANY(%(document_ids)s::uuid[]))
GROUP BY term;

-- lexical_top_passages --
-- The passages holding a query term by Lucene's BM25 (as retrieval/shortlist.py), best first
WITH q AS (
    SELECT * FROM unnest(%(terms)s::text[], %(weights)s::float8[], %(idfs)s::float8[])
        AS q (term, weight, idf)
)
SELECT p.document_id, p.passage,
       sum(q.weight * p.tf / (p.tf + %(k1)s::float8
           * (1 - %(b)s::float8 + %(b)s::float8 * p.length / %(average)s::float8))) AS bm25,
       sum(q.idf) AS covered, max(p.length) AS length
FROM lexical_postings p JOIN q USING (term)
WHERE p.project_id = %(project_id)s AND p.term = ANY(%(terms)s::text[])
  AND (%(document_ids)s::uuid[] IS NULL OR p.document_id = ANY(%(document_ids)s::uuid[]))
GROUP BY p.document_id, p.passage
ORDER BY bm25 DESC, p.document_id, p.passage
LIMIT %(limit)s;

-- lexical_top_passages_by_impact --
-- The best passages for the query by Lucene's BM25, reading only each deep term's best postings by impact, as many as its depth (migration 024's lexical_best_postings), and every posting of the others (their depth NULL): those postings' partial sums pick the rescore best candidates, and each one's sum is completed by a probe for each deep term no read found it under (a bit per term read says which did)
WITH q AS (
    -- bit: a deep term read to some depth, its own bit of the candidates' read mask (the
    -- caller reads at most 63 of them: prefilter.MAX_READ_TERMS)
    SELECT term, weight, idf, depth, depth IS NOT NULL AS deep,
           CASE WHEN depth > 0 THEN 1::bigint
               << (count(*) FILTER (WHERE depth > 0) OVER (ORDER BY n) - 1)::integer
           ELSE 0 END AS bit
    FROM unnest(%(terms)s::text[], %(weights)s::float8[], %(idfs)s::float8[],
                %(depths)s::integer[]) WITH ORDINALITY AS q (term, weight, idf, depth, n)
), best AS (
    SELECT p.document_id, p.passage, p.length, q.bit, q.idf,
           q.weight * p.tf / (p.tf + %(k1)s::float8
               * (1 - %(b)s::float8 + %(b)s::float8 * p.length / %(average)s::float8)) AS part
    FROM q CROSS JOIN LATERAL lexical_best_postings(%(project_id)s, q.term, q.depth) p
    WHERE q.deep
    UNION ALL
    SELECT p.document_id, p.passage, p.length, 0::bigint, q.idf,
           q.weight * p.tf / (p.tf + %(k1)s::float8
               * (1 - %(b)s::float8 + %(b)s::float8 * p.length / %(average)s::float8)) AS part
    FROM q CROSS JOIN LATERAL (
        -- OFFSET 0 keeps it a scan of the primary key per term (joined as a whole, the
        -- planner may hash every posting of the query's terms, as below)
        SELECT * FROM lexical_postings p
        WHERE p.project_id = %(project_id)s AND p.term = q.term OFFSET 0
    ) p
    WHERE NOT q.deep
), candidates AS (
    SELECT document_id, passage, max(length) AS length, sum(part) AS partial,
           sum(idf) AS partial_covered, bit_or(bit) AS read
    FROM best GROUP BY document_id, passage
    ORDER BY partial DESC, document_id, passage
    LIMIT %(rescore)s
)
SELECT c.document_id, c.passage, c.partial + coalesce(s.bm25, 0) AS bm25,
       c.partial_covered + coalesce(s.covered, 0) AS covered, c.length
FROM candidates c CROSS JOIN LATERAL (
    -- A probe of the primary key per candidate and deep term it was not read for (joined
    -- outside a LATERAL, the planner misjudges the terms' postings and hashes all of them: 3x
    -- slower at 1M passages)
    SELECT sum(q.weight * p.tf / (p.tf + %(k1)s::float8
               * (1 - %(b)s::float8 + %(b)s::float8 * p.length / %(average)s::float8))) AS bm25,
           sum(q.idf) AS covered
    FROM q JOIN lexical_postings p
        ON p.project_id = %(project_id)s AND p.term = q.term
       AND p.document_id = c.document_id AND p.passage = c.passage
    WHERE q.deep AND c.read & q.bit = 0
) s
ORDER BY bm25 DESC, c.document_id, c.passage
LIMIT %(limit)s;

-- lexical_document_term_passages --
-- How many passages of each of these documents hold each of these terms (an index-only count: a document's own idf, for answer spans)
SELECT document_id::text AS document_id, term, count(*) AS passages FROM lexical_postings
WHERE project_id = %(project_id)s AND term = ANY(%(terms)s::text[])
  AND document_id = ANY(%(document_ids)s::uuid[])
GROUP BY document_id, term;
