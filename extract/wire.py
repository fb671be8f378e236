"""What crosses between the sandbox parent and its child: the dataclasses themselves, as JSON.

The child sends :class:`~extract.types.Extraction`, :class:`~extract.pdf.PdfPart` (with its
:class:`~extract.ocr.OcrResult`) and the parent sends
:class:`~extract.types.ExtractionLimits`; each is defined once, by its dataclass, and
``msgspec`` turns it into JSON-ready values (:func:`to_wire`) and checks what comes back
against the same fields and types (:func:`from_wire`). A new field is one edit, which mypy
and the check both see; nothing lists the fields a second time.

What a child answers is untrusted (it parsed a hostile document), so it is checked field by
field and never unpickled. The checks are msgspec's lax ones (``strict=False``): JSON
object keys are strings, so ``OcrResult.texts`` (``dict[int, str]``) comes back with
``"3"`` read as the page index 3. A field the child left out takes its default.
"""

from __future__ import annotations

from typing import Any, TypeVar

import msgspec

from extract.errors import CorruptDocumentError

__all__ = ["from_wire", "to_wire"]

T = TypeVar("T")


def to_wire(value: object) -> Any:
    """``value`` (a dataclass, or anything made of them) as JSON-ready lists, dicts and scalars."""
    return msgspec.to_builtins(value)


def from_wire(payload: object, shape: type[T], what: str) -> T:
    """``payload`` (decoded JSON) rebuilt as a ``shape``, every field checked.

    Raises:
        CorruptDocumentError: the payload does not fit ``shape``; the message says which
            field and names the payload as ``what`` ("text", "part").
    """
    try:
        return msgspec.convert(payload, shape, strict=False)
    except msgspec.ValidationError as exc:
        raise CorruptDocumentError(
            f"The extractor answered with a malformed {what} ({exc})"
        ) from exc
