"""How a large file is cut into the parts of an S3 multipart upload.

S3 takes at most 10,000 parts, each at least 5 MiB except the last. The plan is
fixed when the grant is issued and kept with the upload, so the service can
check, part by part, that the store holds exactly what the grant allowed before
it asks the store to join the parts.
"""

from __future__ import annotations

from typing import NamedTuple

MIN_PART_BYTES = 5 * 1024 * 1024
"""S3's smallest part (every part but the last)."""
MAX_PARTS = 10_000
"""S3's largest part count."""


class PlannedPart(NamedTuple):
    number: int
    """1-based, as S3 numbers parts."""
    offset: int
    """Where the part starts in the file."""
    size: int


def part_size_for(size: int, preferred: int) -> int:
    """``preferred`` (at least :data:`MIN_PART_BYTES`), grown when a file that large
    would need more than :data:`MAX_PARTS` parts."""
    if size < 1:
        raise ValueError(f"A file to upload has at least one byte, not {size}.")
    part_size = max(preferred, MIN_PART_BYTES)
    return max(part_size, -(-size // MAX_PARTS))


def plan_parts(size: int, part_size: int) -> list[PlannedPart]:
    """The parts of a ``size``-byte file: all ``part_size`` bytes but the last."""
    if size < 1 or part_size < 1:
        raise ValueError(f"Cannot plan parts of {part_size} bytes for a {size}-byte file.")
    return [
        PlannedPart(number, offset, min(part_size, size - offset))
        for number, offset in enumerate(range(0, size, part_size), start=1)
    ]
