-- Which of procrastinate's own migration files this database has had (procrastinate keeps
-- no such record); service/queue_schema.py applies the missing ones at start-up.

CREATE TABLE queue_migrations (
    name        text PRIMARY KEY,
    applied_at  timestamptz NOT NULL DEFAULT now()
);
