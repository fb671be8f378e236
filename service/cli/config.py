"""``shortlist config``: the effective settings, secrets masked."""

from __future__ import annotations

from typing import Any

import click

from service.cli.plumbing import (
    emit_json,
    json_option,
    main,
)
from service.settings import get_settings


@main.command()
@json_option
def config(as_json: bool) -> None:
    """Print the effective settings, secrets masked; values left unset show what is in effect."""
    settings = get_settings()
    effective = settings.masked()
    effective["server"]["public_url"] = settings.public_url
    effective["resolved"] = {
        "public_url": settings.public_url,
        "storage_backend": settings.storage_backend,
        "reranker": settings.reranker_kind,
        "database": "external (DATABASE_URL)" if settings.database_url else "embedded",
    }
    if as_json:
        emit_json(effective)
        return
    for line in _flatten(effective):
        click.echo(line)


def _flatten(value: dict[str, Any], prefix: str = "") -> list[str]:
    lines = []
    for key, item in value.items():
        if isinstance(item, dict):
            lines.extend(_flatten(item, f"{prefix}{key}."))
        else:
            lines.append(f"{prefix}{key} = {item}")
    return lines
