"""Jupyter notebooks (``.ipynb``): Markdown cells as text, code cells fenced, outputs' text.

A notebook is JSON (nbformat 4; version 3's ``worksheets`` are read too). Markdown cells keep
their Markdown; code cells become fenced blocks in the kernel's language; each output's text
(streams, ``text/plain`` results, errors) follows its cell in a ``text`` block, cut to
``MAX_OUTPUT_CHARS`` so a cell that printed a megabyte does not drown the notebook. Images and
other rich outputs are left out. A notebook is one page.
"""

from __future__ import annotations

import json
from typing import Any

from extract.errors import CorruptDocumentError
from extract.markdown import assemble_pages
from extract.text import decode_text
from extract.types import Extraction

MAX_OUTPUT_CHARS = 2_000


def extract_notebook(data: bytes) -> Extraction:
    """The notebook's cells, in order, as one page of Markdown.

    Raises:
        CorruptDocumentError: when the file is not notebook JSON.
        EmptyDocumentError: when no cell has text.
    """
    text, _encoding = decode_text(data)
    try:
        notebook = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise CorruptDocumentError(f"This notebook is not valid JSON: {exc}") from exc
    if not isinstance(notebook, dict):
        raise CorruptDocumentError("This file is JSON but not a Jupyter notebook.")
    cells = _cells(notebook)
    language = _language(notebook)
    blocks = [block for cell in cells for block in _cell_blocks(cell, language)]
    return assemble_pages(["\n\n".join(blocks)], "notebook")


def _cells(notebook: dict[str, Any]) -> list[dict[str, Any]]:
    cells = notebook.get("cells")
    if cells is None and isinstance(notebook.get("worksheets"), list):  # nbformat 3
        cells = [cell for sheet in notebook["worksheets"] for cell in sheet.get("cells", [])]
    if not isinstance(cells, list):
        raise CorruptDocumentError("This file is JSON but has no notebook cells.")
    return [cell for cell in cells if isinstance(cell, dict)]


def _language(notebook: dict[str, Any]) -> str:
    metadata = notebook.get("metadata") or {}
    info = metadata.get("language_info") or {}
    spec = metadata.get("kernelspec") or {}
    name = info.get("name") or spec.get("language") or ""
    return name if isinstance(name, str) and name.isidentifier() else ""


def _joined(source: Any) -> str:
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _fenced(body: str, language: str) -> str:
    fence = "```"
    while fence in body:
        fence += "`"
    return f"{fence}{language}\n{body.rstrip()}\n{fence}"


def _cell_blocks(cell: dict[str, Any], language: str) -> list[str]:
    source = _joined(cell.get("source", cell.get("input"))).strip()
    kind = cell.get("cell_type")
    if kind == "markdown":
        return [source] if source else []
    if kind == "raw":
        return [_fenced(source, "")] if source else []
    if kind != "code":
        return []
    blocks = [_fenced(source, language)] if source else []
    for output in cell.get("outputs") or []:
        text = _output_text(output) if isinstance(output, dict) else ""
        if text.strip():
            if len(text) > MAX_OUTPUT_CHARS:
                text = text[:MAX_OUTPUT_CHARS] + "\n… (output cut)"
            blocks.append(_fenced(text, "text"))
    return blocks


def _output_text(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _joined(output.get("text"))
    if kind in ("execute_result", "display_data", "pyout"):
        data = output.get("data") or output
        return _joined(data.get("text/plain", data.get("text")))
    if kind in ("error", "pyerr"):
        return f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
    return ""
