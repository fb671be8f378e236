"""What a document may be called.

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
    if any(unicodedata.category(ch) == "Cc" for ch in cleaned):
        raise InvalidFilename("The file name contains control characters.")
    if any(ch in _BIDI_CONTROLS for ch in cleaned):
        raise InvalidFilename("The file name contains bidirectional override characters.")
    return cleaned
