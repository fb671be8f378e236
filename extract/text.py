"""Plain text, Markdown and CSV: decode the bytes, keep the text, tabulate CSV."""

from __future__ import annotations

import codecs
import csv
import io

import charset_normalizer

from extract.errors import UnsupportedFormatError
from extract.markdown import assemble_pages, markdown_table
from extract.types import Extraction

_BOMS: tuple[tuple[bytes, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_WESTERN = frozenset({"cp1252", "latin_1", "iso8859_15"})
_WESTERN_CHAOS_SLACK = 0.05
"""charset-normalizer often ranks cp1250/cp775 first for short French or German
Latin-1 text with near-equal "chaos"; within this slack the Western code page wins."""


def decode_text(data: bytes) -> tuple[str, str]:
    """Decode text bytes; returns ``(text, encoding)``.

    Order: a byte-order mark (UTF-8/16/32), strict UTF-8, charset-normalizer's
    guess (preferring Western code pages on a near tie), then Latin-1, which
    never fails.

    Raises:
        UnsupportedFormatError: when the bytes look binary (NUL bytes without a UTF-16/32 BOM).
    """
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data[len(bom) :].decode(encoding.removesuffix("-sig")), encoding
            except UnicodeDecodeError:
                break
    if b"\x00" in data:
        raise UnsupportedFormatError("This file looks binary, not text; upload a supported format")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    matches = list(charset_normalizer.from_bytes(data))
    if matches:
        best = matches[0]
        encoding = best.encoding
        for match in matches:
            if match.encoding in _WESTERN and match.chaos <= best.chaos + _WESTERN_CHAOS_SLACK:
                encoding = "cp1252"
                break
        try:
            return data.decode(encoding), encoding
        except (UnicodeDecodeError, LookupError):
            pass
    return data.decode("latin-1"), "latin-1"


def _normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def extract_text(data: bytes) -> Extraction:
    """Plain text as one page, unchanged apart from newlines."""
    text, _ = decode_text(data)
    return assemble_pages([_normalise_newlines(text)], "text")


def extract_markdown(data: bytes) -> Extraction:
    """Markdown as one page, unchanged apart from newlines."""
    text, _ = decode_text(data)
    return assemble_pages([_normalise_newlines(text)], "markdown")


def _sniff_dialect(sample: str) -> type[csv.Dialect] | csv.Dialect:
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        return csv.excel


def extract_csv(data: bytes) -> Extraction:
    """CSV (or TSV/semicolon-separated) as one Markdown table; the first row is the header."""
    text, _ = decode_text(data)
    text = _normalise_newlines(text)
    dialect = _sniff_dialect(text[: 64 * 1024])
    rows = [row for row in csv.reader(io.StringIO(text), dialect) if any(c.strip() for c in row)]
    return assemble_pages([markdown_table(rows)], "csv")
