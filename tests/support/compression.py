"""Compressed bodies a hostile web server sends: gzip and deflate, nested, and bombs."""

from __future__ import annotations

import functools
import gzip
import zlib

MB = 1_048_576


def gzip_of_zeros(size: int) -> bytes:
    """A gzip member that decodes to ``size`` zero bytes (about 1,000 times smaller),
    compressed a megabyte at a time so the test never holds the decoded bytes."""
    encoder = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    block = bytes(MB)
    parts = [encoder.compress(block) for _ in range(size // MB)]
    parts.append(encoder.compress(bytes(size % MB)))
    parts.append(encoder.flush())
    return b"".join(parts)


@functools.cache
def nested_gzip_bomb(decoded_size: int = 256 * MB) -> bytes:
    """``Content-Encoding: gzip, gzip``: a few KB on the wire, ``decoded_size`` decoded."""
    return gzip.compress(gzip_of_zeros(decoded_size), compresslevel=9)


GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"
EMPTY_STORED_BLOCK = b"\x00\x00\x00\xff\xff"
"""A deflate block that is not the last and holds no bytes (the kind a flush writes)."""


def gzip_that_decodes_to_nothing(wire_size: int) -> bytes:
    """A gzip stream of ``wire_size`` bytes that never yields a byte and never ends."""
    return GZIP_HEADER + EMPTY_STORED_BLOCK * (wire_size // len(EMPTY_STORED_BLOCK))
