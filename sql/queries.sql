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
