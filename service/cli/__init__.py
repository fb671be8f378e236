"""The ``shortlist`` command: the group and its shared plumbing (:mod:`service.cli.plumbing`),
one module per command group, and the small HTTP client the commands that talk to a running
service use."""

from __future__ import annotations

# Each module registers its commands on ``main`` when imported.
from service.cli import (  # noqa: F401
    config,
    documents,
    evaluation,
    extract,
    ingest,
    mcp,
    search,
    serve,
    sync,
    upload,
    users,
    worker,
)
from service.cli.plumbing import main

__all__ = ["main"]
