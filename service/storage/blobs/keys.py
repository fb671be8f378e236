"""What a blob key may look like, checked the same way by every store."""

from __future__ import annotations

from service.storage.blobs.errors import InvalidBlobKey

MAX_KEY_BYTES = 1024
"""S3's limit on a key's UTF-8 length."""


def validate_key(key: str) -> str:
    """Return ``key`` if it is a safe relative path, else raise InvalidBlobKey.

    Refused: empty keys, a leading ``/``, backslashes, NUL and other control
    characters, empty segments (``a//b``), ``.`` and ``..`` segments, and
    segments starting with ``.`` (the local store keeps its temporary and
    metadata files under such names, so no key can ever collide with them).
    """
    if not key:
        raise InvalidBlobKey("A blob key may not be empty.")
    if len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise InvalidBlobKey(f"A blob key may be at most {MAX_KEY_BYTES} bytes long.")
    if key.startswith("/"):
        raise InvalidBlobKey("A blob key is relative: it may not start with '/'.")
    if "\\" in key:
        raise InvalidBlobKey("A blob key may not contain backslashes.")
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in key):
        raise InvalidBlobKey("A blob key may not contain NUL or other control characters.")
    for segment in key.split("/"):
        if not segment:
            raise InvalidBlobKey(
                "A blob key may not contain empty segments ('//' or a trailing '/')."
            )
        if segment.startswith("."):
            raise InvalidBlobKey("A blob key segment may not start with '.' (this refuses '..').")
    return key
