"""The Content-Disposition header under which downloads are served."""

from __future__ import annotations

from urllib.parse import quote


def inline_disposition(filename: str) -> str:
    """``inline`` with an ASCII fallback name and the exact UTF-8 name (RFC 6266 / 8187).

    ``inline`` (not ``attachment``) lets a browser's PDF viewer open the file, so
    ``#page=N`` fragments work.
    """
    fallback = "".join(
        char if 0x20 <= ord(char) < 0x7F and char not in '"\\' else "_" for char in filename
    )
    return f"inline; filename=\"{fallback}\"; filename*=UTF-8''{quote(filename, safe='')}"
