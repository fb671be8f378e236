-- Deleting a document withdraws its upload grant: the grant's row records when, the local
-- store refuses the grant from then on, and the sweep removes whatever an S3 grant (which
-- cannot be withdrawn) still delivered once it expired.

ALTER TABLE uploads ADD COLUMN revoked_at timestamptz;

DROP INDEX uploads_unregistered_expires_at_idx;
CREATE INDEX uploads_sweepable_expires_at_idx ON uploads (expires_at)
    WHERE consumed_at IS NULL OR revoked_at IS NOT NULL;
