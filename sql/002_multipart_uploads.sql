-- S3 multipart uploads: the store's id of the upload and the part size its grant planned,
-- so registration can check every part before joining them; and a sweep index for grants
-- that were never registered.

ALTER TABLE uploads
    ADD COLUMN multipart_id     text,
    ADD COLUMN part_size_bytes  bigint CHECK (part_size_bytes > 0),
    ADD CONSTRAINT uploads_multipart_check
        CHECK ((multipart_id IS NULL) = (part_size_bytes IS NULL));

CREATE INDEX uploads_unregistered_expires_at_idx ON uploads (expires_at)
    WHERE consumed_at IS NULL;
