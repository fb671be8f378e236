-- Documents an assistant asked for (the MCP tool request_document): logged, never fetched,
-- until the project's owner approves one with an address, which runs a URL import
-- (service/services/document_requests.py). Asking again for a pending title joins it.

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
