"""What a document (and, for its characters, a project) may be called.

Names are shown to people and models, so they are kept as given (any script,
right-to-left included) after NFC normalisation and trimming, but a name may
not smuggle a path, control characters or bidirectional overrides (which can
make ``report‮fdp.exe`` read as ``report.exe.pdf``).
"""

from __future__ import annotations

import unicodedata

from service.errors import InvalidRequest

MAX_NAME_LENGTH = 255
_BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


class InvalidFilename(InvalidRequest):
    """That file name cannot be used."""

    code = "invalid_filename"


def clean_filename(name: str) -> str:
    """The name as it will be stored, or InvalidFilename saying what is wrong."""
    cleaned = unicodedata.normalize("NFC", name).strip()
    if not cleaned:
        raise InvalidFilename("The file name is empty.")
    if len(cleaned) > MAX_NAME_LENGTH:
        raise InvalidFilename(
            f"The file name is longer than {MAX_NAME_LENGTH} characters; shorten it."
        )
    if "/" in cleaned or "\\" in cleaned:
        raise InvalidFilename(
            "The file name may not contain / or \\; send the name without its folder."
        )
    if cleaned in (".", ".."):
        raise InvalidFilename("The file name cannot be . or ..")
    if problem := unsafe_characters(cleaned):
        raise InvalidFilename(f"The file name contains {problem}.")
    return cleaned


def unsafe_characters(name: str) -> str | None:
    """What in ``name`` may not be in any name (file or project), or None.

    Control characters (NUL, newlines…) and bidirectional overrides and isolates,
    which make a name read otherwise than it is.
    """
    if any(unicodedata.category(ch) == "Cc" for ch in name):
        return "control characters"
    if any(ch in _BIDI_CONTROLS for ch in name):
        return "bidirectional override characters"
    return None
