"""``shortlist extract FILE``: the Markdown a file becomes, without storing it."""

from __future__ import annotations

from pathlib import Path

import click

from service.cli.plumbing import (
    emit_json,
    fail,
    json_option,
    main,
)
from service.settings import get_settings


@main.command("extract")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@json_option
def extract_command(path: Path, as_json: bool) -> None:
    """Print the Markdown a file becomes, or the reason it cannot be searched (exit 2)."""
    from extract import ExtractionError
    from service.services.extraction import limits_for, sandbox_pool

    settings = get_settings()
    try:
        with sandbox_pool(settings) as sandboxes:  # a long PDF is read in parallel parts
            result = sandboxes.extract(
                path.read_bytes(), path.name, None, limits=limits_for(settings)
            )
    except ExtractionError as exc:
        fail(exc.message, code=exc.code, as_json=as_json)
    if as_json:
        emit_json(
            {
                "kind": result.kind,
                "page_count": result.page_count,
                "warnings": list(result.warnings),
                "ocr_pages": list(result.ocr_pages),
                "markdown": result.markdown,
            }
        )
        return
    for warning in result.warnings:
        click.echo(f"warning: {warning}", err=True)
    click.echo(result.markdown)
