-- Extraction progress of a document being extracted: pages read so far, of how many
-- (both NULL until the extractor knows the page count; reset when an attempt starts).

ALTER TABLE documents ADD COLUMN pages_done integer CHECK (pages_done >= 0);
ALTER TABLE documents ADD COLUMN pages_total integer CHECK (pages_total >= 0);
