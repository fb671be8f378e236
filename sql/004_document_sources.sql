-- Documents imported from a web address remember it: the worker fetches the original from
-- there the first time (service/services/imports.py), and people can see where it came from.

ALTER TABLE documents ADD COLUMN source_url text CHECK (length(source_url) <= 2048);
