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
INSERT INTO api_tokens (user_id, token_hash, prefix, label)
VALUES (%(user_id)s, %(token_hash)s, %(prefix)s, %(label)s)
RETURNING id, user_id, prefix, label, created_at, revoked_at;

-- fetch_principal_by_token_hash --
-- The live token with this hash and its user
SELECT t.id AS token_id, t.token_hash, u.id AS user_id, u.name AS user_name
FROM api_tokens t JOIN users u ON u.id = t.user_id
WHERE t.token_hash = %(token_hash)s AND t.revoked_at IS NULL;

-- list_api_tokens --
-- A user's tokens, newest first
SELECT id, user_id, prefix, label, created_at, revoked_at
FROM api_tokens WHERE user_id = %(user_id)s ORDER BY created_at DESC;

-- revoke_api_tokens_by_prefix --
-- Revoke the live tokens whose prefix (or id) matches
UPDATE api_tokens SET revoked_at = now()
WHERE revoked_at IS NULL AND (prefix = %(prefix)s OR id::text = %(prefix)s)
RETURNING id, user_id, prefix, label, created_at, revoked_at;

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
-- One of a user's projects, by id
SELECT p.id, p.user_id, p.name, p.created_at,
       (SELECT count(*) FROM documents d WHERE d.project_id = p.id) AS document_count,
       (SELECT count(*) FROM documents d WHERE d.project_id = p.id AND d.status = 'ready') AS ready_count
FROM projects p WHERE p.id = %(project_id)s AND p.user_id = %(user_id)s;

-- fetch_project_by_name --
-- One of a user's projects, by name compared case-insensitively
SELECT p.id, p.user_id, p.name, p.created_at,
       (SELECT count(*) FROM documents d WHERE d.project_id = p.id) AS document_count,
       (SELECT count(*) FROM documents d WHERE d.project_id = p.id AND d.status = 'ready') AS ready_count
FROM projects p WHERE lower(btrim(p.name)) = lower(btrim(%(name)s)) AND p.user_id = %(user_id)s;

-- fetch_document_by_name --
-- A project's document with this name, compared case-insensitively and trimmed
SELECT id FROM documents
WHERE project_id = %(project_id)s AND lower(btrim(name)) = lower(btrim(%(name)s));

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

-- consume_upload --
-- Mark an upload as registered
UPDATE uploads SET consumed_at = now() WHERE id = %(upload_id)s;

-- lock_abandoned_uploads --
-- Grants never registered long after they expired, locked (skipping any being registered now)
SELECT * FROM uploads
WHERE consumed_at IS NULL AND expires_at < now() - make_interval(secs => %(after_seconds)s)
ORDER BY expires_at
LIMIT %(limit)s
FOR UPDATE SKIP LOCKED;

-- delete_upload --
-- Forget an upload grant
DELETE FROM uploads WHERE id = %(upload_id)s;

-- insert_document --
-- Create a document row, pending extraction
INSERT INTO documents (project_id, name, content_type, size_bytes, object_key, status)
VALUES (%(project_id)s, btrim(%(name)s), %(content_type)s, %(size_bytes)s, %(object_key)s, %(status)s)
RETURNING id, project_id, name, content_type, size_bytes, object_key, status, error_code,
          error_message, kind, page_count, pages_done, pages_total, content_hash, warnings,
          attempts, created_at, updated_at, extracted_at;

-- list_documents --
-- A project's documents with metadata (no text), newest first
SELECT d.id, d.project_id, d.name, d.content_type, d.size_bytes, d.object_key, d.status,
       d.error_code, d.error_message, d.kind, d.page_count, d.pages_done, d.pages_total,
       d.content_hash, d.warnings, d.attempts, d.created_at, d.updated_at, d.extracted_at
FROM documents d JOIN projects p ON p.id = d.project_id
WHERE d.project_id = %(project_id)s AND p.user_id = %(user_id)s
ORDER BY d.created_at DESC, d.name;

-- fetch_document --
-- One of the user's documents with metadata (no text)
SELECT d.id, d.project_id, d.name, d.content_type, d.size_bytes, d.object_key, d.status,
       d.error_code, d.error_message, d.kind, d.page_count, d.pages_done, d.pages_total,
       d.content_hash, d.warnings, d.attempts, d.created_at, d.updated_at, d.extracted_at
FROM documents d JOIN projects p ON p.id = d.project_id
WHERE d.id = %(document_id)s AND p.user_id = %(user_id)s;

-- fetch_document_text --
-- One of the user's documents with its whole Markdown
SELECT d.id, d.name, d.status, d.page_count, d.markdown
FROM documents d JOIN projects p ON p.id = d.project_id
WHERE d.id = %(document_id)s AND p.user_id = %(user_id)s;

-- delete_document --
-- Delete one of the user's documents, returning where its original was
DELETE FROM documents d USING projects p
WHERE d.id = %(document_id)s AND p.id = d.project_id AND p.user_id = %(user_id)s
RETURNING d.id, d.object_key;

-- reset_document_for_extraction --
-- Put one of the user's documents back to pending for a new extraction
UPDATE documents d SET status = 'pending', error_code = NULL, error_message = NULL,
       attempts = 0, updated_at = now()
FROM projects p
WHERE d.id = %(document_id)s AND p.id = d.project_id AND p.user_id = %(user_id)s
  AND d.object_key IS NOT NULL
RETURNING d.id;

-- list_ready_document_refs --
-- Id, name and content hash of a project's searchable documents (optionally only some)
SELECT id, name, content_hash FROM documents
WHERE project_id = %(project_id)s AND status = 'ready'
  AND (%(document_ids)s::uuid[] IS NULL OR id = ANY(%(document_ids)s::uuid[]))
ORDER BY created_at, id;

-- fetch_documents_markdown --
-- The Markdown of the given documents, for the in-memory chunk cache
SELECT id, name, content_hash, markdown FROM documents
WHERE id = ANY(%(document_ids)s::uuid[]) AND status = 'ready';

-- list_recent_ready_documents --
-- The most recently extracted searchable documents, for warming caches at start-up
SELECT id, name, content_hash, markdown FROM documents
WHERE status = 'ready' ORDER BY extracted_at DESC NULLS LAST LIMIT %(limit)s;

-- claim_document_for_extraction --
-- Mark a document as being extracted, counting the attempt; nothing if it is gone
UPDATE documents SET status = 'processing', attempts = attempts + 1, pages_done = NULL,
       pages_total = NULL, updated_at = now()
WHERE id = %(document_id)s AND status IN ('pending', 'processing')
RETURNING id, name, content_type, size_bytes, object_key, attempts;

-- record_extraction_progress --
-- Note how many of a document's pages the extractor has read (while it is being extracted)
UPDATE documents SET pages_done = %(pages_done)s, pages_total = %(pages_total)s
WHERE id = %(document_id)s AND status = 'processing';

-- store_extraction --
-- Save a successful extraction: the whole Markdown, once
UPDATE documents SET status = 'ready', markdown = %(markdown)s, content_hash = %(content_hash)s,
       kind = %(kind)s, page_count = %(page_count)s, warnings = %(warnings)s,
       error_code = NULL, error_message = NULL, extracted_at = now(), updated_at = now()
WHERE id = %(document_id)s AND status = 'processing'
RETURNING id, project_id, content_hash;

-- store_extraction_error --
-- Save why a document cannot be searched
UPDATE documents SET status = 'error', error_code = %(error_code)s, error_message = %(error_message)s,
       markdown = NULL, content_hash = NULL, updated_at = now()
WHERE id = %(document_id)s AND status IN ('pending', 'processing')
RETURNING id;

-- fail_stale_documents --
-- Mark documents stuck in extraction for too long as failed
UPDATE documents SET status = 'error', error_code = 'extraction_stalled',
       error_message = 'Extraction did not finish in time; re-extract the document to try again.',
       updated_at = now()
WHERE status IN ('pending', 'processing') AND updated_at < now() - make_interval(secs => %(seconds)s)
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
-- Create a document row already claimed for extraction (the CLI's direct path)
INSERT INTO documents (project_id, name, content_type, size_bytes, object_key, status, attempts)
VALUES (%(project_id)s, btrim(%(name)s), %(content_type)s, %(size_bytes)s, %(object_key)s, 'processing', 1)
RETURNING id, project_id, name, content_type, size_bytes, object_key, status, error_code,
          error_message, kind, page_count, pages_done, pages_total, content_hash, warnings,
          attempts, created_at, updated_at, extracted_at;

-- count_mentions --
-- Per ready document of a project and per term: occurrences and pages (lower-cased, whitespace collapsed)
WITH terms AS (
    SELECT lower(t.term) AS term, t.ord
    FROM unnest(%(terms)s::text[]) WITH ORDINALITY AS t(term, ord)
),
docs AS (
    SELECT d.id, d.name, d.markdown,
           lower(regexp_replace(regexp_replace(d.markdown, '<!-- page \d+ -->', ' ', 'g'),
                                '\s+', ' ', 'g')) AS flat,
           ARRAY(SELECT m[1]::int FROM regexp_matches(d.markdown, '<!-- page (\d+) -->', 'g') AS m)
               AS page_numbers
    FROM documents d
    WHERE d.project_id = %(project_id)s AND d.status = 'ready'
),
page_texts AS (
    SELECT docs.id, coalesce(docs.page_numbers[p.ord - 1], 1) AS page,
           lower(regexp_replace(p.piece, '\s+', ' ', 'g')) AS flat
    FROM docs, regexp_split_to_table(docs.markdown, '<!-- page \d+ -->') WITH ORDINALITY AS p(piece, ord)
),
found_pages AS (
    SELECT pt.id, terms.ord, array_agg(DISTINCT pt.page ORDER BY pt.page) AS pages
    FROM page_texts pt JOIN terms ON strpos(pt.flat, terms.term) > 0
    GROUP BY pt.id, terms.ord
)
SELECT docs.id AS document_id, docs.name AS document_name, terms.ord AS term_index,
       (length(docs.flat) - length(replace(docs.flat, terms.term, ''))) / length(terms.term) AS count,
       coalesce(fp.pages, '{}'::int[]) AS pages
FROM docs CROSS JOIN terms
LEFT JOIN found_pages fp ON fp.id = docs.id AND fp.ord = terms.ord
ORDER BY lower(docs.name), docs.id, terms.ord;
