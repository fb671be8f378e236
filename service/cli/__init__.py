"""The ``shortlist`` command and the small HTTP client its upload commands use."""

from __future__ import annotations

from service.cli import documents as _documents  # noqa: F401  (registers its commands on main)
from service.cli import sync as _sync  # noqa: F401 - registers `shortlist sync` on main
from service.cli.commands import main

__all__ = ["main"]
