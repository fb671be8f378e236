-- The figures extraction found on a document's PDF pages (issue #27): each one's page, box (its
-- caption included, in points) and caption, as a JSON array of {page, box, caption, label}. The
-- pixels are never stored: a figure is drawn from the original when it is asked for.

ALTER TABLE documents ADD COLUMN figures jsonb NOT NULL DEFAULT '[]'::jsonb
    CHECK (jsonb_typeof(figures) = 'array');
