-- The current schema in full: equal to every migration applied in order (tests/integration/test_migrations.py checks).
-- Users, their API tokens, their projects, and the documents in them.

CREATE TABLE users (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name        text NOT NULL CHECK (length(btrim(name)) BETWEEN 1 AND 200),
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_name_key ON users (lower(btrim(name)));

-- Only a SHA-256 of each token is stored; the token itself is shown once.
CREATE TABLE api_tokens (
    id          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    user_id     uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    token_hash  bytea NOT NULL UNIQUE,
    prefix      text NOT NULL,
    label       text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now(),
    revoked_at  timestamptz
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
    CONSTRAINT uploads_multipart_check CHECK ((multipart_id IS NULL) = (part_size_bytes IS NULL))
);
CREATE INDEX uploads_project_id_idx ON uploads (project_id);
CREATE INDEX uploads_unregistered_expires_at_idx ON uploads (expires_at) WHERE consumed_at IS NULL;

-- One row per document: its whole extracted text lives here (TOASTed), once.
CREATE TABLE documents (
    id             uuid PRIMARY KEY DEFAULT gen_random_uuid(),
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
    CHECK (status <> 'ready' OR (markdown IS NOT NULL AND content_hash IS NOT NULL)),
    CHECK (status <> 'error' OR error_code IS NOT NULL)
);
CREATE UNIQUE INDEX documents_project_name_key ON documents (project_id, lower(btrim(name)));
CREATE INDEX documents_project_status_idx ON documents (project_id, status);

-- Which of procrastinate's own migration files this database has had (service/queue_schema.py).
CREATE TABLE queue_migrations (
    name        text PRIMARY KEY,
    applied_at  timestamptz NOT NULL DEFAULT now()
);
