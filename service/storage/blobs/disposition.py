"""How a stored original is presented to the browser that opens its download link.

A user's upload is hostile: opened on the service's own origin, an HTML or SVG
file would run its script with the visitor's session. So every store serves an
original under the type the service chose (never the one the uploader
declared), as a download unless it is ``inline`` (only PDFs are: a browser's
PDF viewer then opens them and ``#page=N`` works), and the local store adds
:data:`ORIGINAL_RESPONSE_HEADERS` so that nothing in a file can run, sniff its
way to another type or load anything, even when a browser renders it.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import quote

Disposition = Literal["inline", "attachment"]
"""``inline``: the browser may display the file; ``attachment``: it saves it."""

DISPOSITIONS: tuple[Disposition, ...] = ("inline", "attachment")

ORIGINAL_RESPONSE_HEADERS: dict[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "sandbox",
    "Cache-Control": "private, no-store",
}
"""Sent with every original the service itself serves: no type sniffing, and a sandbox
(a unique origin, no script, no forms, no plugins' access to the service)."""


def content_disposition(disposition: Disposition, filename: str) -> str:
    """The ``Content-Disposition`` header: ``disposition`` with an ASCII fallback name and
    the exact UTF-8 name (RFC 6266 / 8187)."""
    if disposition not in DISPOSITIONS:
        raise ValueError(
            f"disposition must be one of {', '.join(DISPOSITIONS)}, not {disposition!r}."
        )
    fallback = "".join(
        char if 0x20 <= ord(char) < 0x7F and char not in '"\\' else "_" for char in filename
    )
    return f"{disposition}; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
