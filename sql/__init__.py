"""Shortlist's SQL: the schema, its migrations, and every runtime query by name.

``queries.sql`` holds blocks of the form::

    -- insert_user --
    -- Create a user (description line)
    INSERT INTO users (name) VALUES (%(name)s) RETURNING *;

and :data:`queries` maps each name to its text. Callers pass keyword
parameters named like the ``%(placeholders)s``.

mypy treats ``LiteralString`` as ``str``; the annotation records the intent
that these texts are fixed SQL, never built from user input.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import LiteralString, NamedTuple

__all__ = ["Migration", "load_migrations", "migrations", "parse_queries", "queries", "schema"]

_QUERY_HEADER = re.compile(r"^-- ([a-z][a-z0-9_]*) --$", re.MULTILINE)
_MIGRATION_NAME = re.compile(r"^(\d{3})_([a-z0-9_]+)\.sql$")


class Migration(NamedTuple):
    version: int
    name: str
    sql: LiteralString


def _read(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def parse_queries(text: str) -> dict[str, LiteralString]:
    """Split ``queries.sql`` text into ``{name: query}``; a repeated name is an error."""
    parts = _QUERY_HEADER.split(text)
    found: dict[str, LiteralString] = {}
    for name, body in zip(parts[1::2], parts[2::2], strict=True):
        if name in found:
            raise ValueError(f"query {name!r} is defined twice in queries.sql")
        lines = body.strip().splitlines()
        if not lines or not lines[0].startswith("--"):
            raise ValueError(f"query {name!r} needs a '-- description' line under its name")
        found[name] = "\n".join(lines[1:]).strip()
    return found


def load_migrations() -> list[Migration]:
    """Every ``NNN_name.sql`` file in this package, in version order."""
    found = []
    for entry in resources.files(__package__).iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            sql = entry.read_text(encoding="utf-8")
            found.append(Migration(int(match[1]), match[2], sql))
    found.sort()
    versions = [migration.version for migration in found]
    if len(set(versions)) != len(versions):
        raise ValueError(f"two migrations share a version number: {versions}")
    return found


queries: dict[str, LiteralString] = parse_queries(_read("queries.sql"))
migrations: list[Migration] = load_migrations()
schema: LiteralString = _read("schema.sql")
