-- What an API token may do: 'read' (search, list, read) or 'write' (also upload, import,
-- delete, re-extract, create projects, log and approve requests). Tokens made before scopes
-- existed keep writing (service/services/scopes.py holds the rule).

ALTER TABLE api_tokens ADD COLUMN scope text NOT NULL DEFAULT 'write'
    CHECK (scope IN ('read', 'write'));
