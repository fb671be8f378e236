"""Where Shortlist keeps things: PostgreSQL (pool, migrations, the job queue's schema, the
embedded server) and the blob stores that hold the original files."""
