-- Documents `shortlist sync` keeps in step with a folder: where the file is (relative to the
-- synced folder), the SHA-256 of its bytes, and the size and modification time it had when it
-- was last read, so an unchanged file is skipped without reading it again
-- (service/services/folder_sync.py).

ALTER TABLE documents ADD COLUMN sync_path text CHECK (length(sync_path) <= 4096);
ALTER TABLE documents ADD COLUMN original_sha256 text CHECK (length(original_sha256) = 64);
ALTER TABLE documents ADD COLUMN sync_size bigint;
ALTER TABLE documents ADD COLUMN sync_mtime_ns bigint;
CREATE UNIQUE INDEX documents_project_sync_path_key ON documents (project_id, sync_path)
    WHERE sync_path IS NOT NULL;
