"""Read a fetched body within the size limit, decoding at most one content coding.

A compressed response is a decompression bomb waiting to happen: ``Content-Encoding: gzip,
gzip`` of 7 KB decodes to 4 GiB, and a decoder that inflates each network chunk in full has
exhausted the memory before any size check sees the bytes. So:

- the fetch asks for ``Accept-Encoding: identity`` (:data:`ACCEPT_ENCODING`);
- a server that compresses anyway may use one ``gzip`` (``x-gzip``) or ``deflate`` coding,
  decoded here incrementally with what is left of the size limit as the decoder's output
  cap (``zlib`` ``max_length``), so no more than the limit plus one byte is ever held;
- nested codings and any other coding (``br``, ``zstd``, ``compress``…) are refused with
  :class:`~service.errors.UrlUnsupportedEncoding` before the body is read;
- the bytes on the wire count against the limit too, so a stream that decodes to nothing
  cannot run on for ever.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Literal

from service.errors import UrlTooLarge, UrlUnsupportedEncoding, UrlUnsupportedType

ACCEPT_ENCODING = "identity"
"""What a fetch asks the server for: the document as it is."""

Coding = Literal["identity", "gzip", "deflate"]
_CODINGS: dict[str, Coding] = {
    "identity": "identity",
    "gzip": "gzip",
    "x-gzip": "gzip",
    "deflate": "deflate",
}
_GZIP_WBITS = zlib.MAX_WBITS | 16
_RAW_DEFLATE_WBITS = -zlib.MAX_WBITS


def content_coding(header: str | None) -> Coding:
    """The one coding a ``Content-Encoding`` header names, or the refusal."""
    named = [part.strip().lower() for part in (header or "").split(",") if part.strip()]
    applied = [name for name in named if name != "identity"]
    unknown = [name for name in applied if name not in _CODINGS]
    if unknown:
        raise UrlUnsupportedEncoding(
            f"The address compressed the document as {', '.join(unknown)!s}; Shortlist decodes "
            "only gzip and deflate (and asks for none)."
        )
    if len(applied) > 1:
        raise UrlUnsupportedEncoding(
            f"The address compressed the document more than once ({', '.join(applied)}); "
            "Shortlist decodes one gzip or deflate coding at most."
        )
    return _CODINGS[applied[0]] if applied else "identity"


def too_large(size: int | None, limit: int, *, decoded: bool = False) -> UrlTooLarge:
    said = (
        f"{size / 1_048_576:.1f} MB"
        if size is not None
        else "more than the limit once decompressed"
        if decoded
        else "more than the limit"
    )
    return UrlTooLarge(
        f"The document at the address is {said}; the limit is {limit / 1_048_576:.0f} MB.",
        limit=limit,
    )


class _Inflater:
    """Incremental gzip or deflate decoding whose output never passes a budget."""

    def __init__(self, coding: Literal["gzip", "deflate"]) -> None:
        self.coding = coding
        self.wbits = _GZIP_WBITS if coding == "gzip" else zlib.MAX_WBITS
        self.decoder = zlib.decompressobj(self.wbits)
        self.started = False

    def feed(self, data: bytes, budget: int) -> bytes:
        """Decode ``data``: at most ``budget + 1`` bytes (one more says "over budget")."""
        out = bytearray()
        pending = data
        while pending and len(out) <= budget:
            try:
                piece = self.decoder.decompress(pending, budget + 1 - len(out))
            except zlib.error as exc:
                if self.coding == "deflate" and not self.started:
                    # Some servers send raw deflate, without the zlib wrapper HTTP asks for.
                    self.decoder = zlib.decompressobj(_RAW_DEFLATE_WBITS)
                    self.started = True
                    continue
                raise UrlUnsupportedType(
                    f"The address sent a {self.coding} body that does not decode: {exc}."
                ) from exc
            self.started = True
            out += piece
            if self.decoder.eof:
                # gzip allows members one after another: decode the next with the same budget.
                pending = self.decoder.unused_data
                if pending and self.coding == "gzip":
                    self.decoder = zlib.decompressobj(self.wbits)
                    continue
                pending = b""
            else:
                pending = self.decoder.unconsumed_tail
        return bytes(out)


async def read_body(
    raw_chunks: AsyncIterator[bytes],
    *,
    content_encoding: str | None,
    content_length: str | None,
    limit: int,
) -> bytes:
    """The decoded body from the bytes on the wire, or :class:`UrlTooLarge` past ``limit``."""
    coding = content_coding(content_encoding)
    if content_length is not None and content_length.isdigit() and int(content_length) > limit:
        raise too_large(int(content_length), limit)
    inflater = None if coding == "identity" else _Inflater(coding)
    received = bytearray()
    on_the_wire = 0
    async for chunk in raw_chunks:
        on_the_wire += len(chunk)
        if on_the_wire > limit:
            raise too_large(None, limit)
        received += chunk if inflater is None else inflater.feed(chunk, limit - len(received))
        if len(received) > limit:
            raise too_large(None, limit, decoded=inflater is not None)
    if not received:
        raise UrlUnsupportedType("The address answered with an empty body.")
    return bytes(received)
