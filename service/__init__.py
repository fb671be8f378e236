"""Shortlist's I/O edge: settings, PostgreSQL, blob storage, the REST API, MCP, the panel and the CLI."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("shortlist")
except PackageNotFoundError:  # pragma: no cover - running from a tree that was never installed
    __version__ = "0.0.0"
