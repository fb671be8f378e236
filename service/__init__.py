"""Shortlist's I/O edge: settings, PostgreSQL, blob storage, the REST API, MCP, the panel and the CLI."""
