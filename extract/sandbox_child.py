"""The sandbox child: ``python -m extract.sandbox_child`` (started by :mod:`extract.sandbox`).

Reads one JSON header line and the document bytes from stdin, caps its own
address space, extracts, and writes one JSON answer to stdout.
"""

from __future__ import annotations

import dataclasses
import json
import os
import resource
import sys
from typing import Any

from extract.document import extract_document
from extract.errors import DocumentTooLargeError, ExtractionError
from extract.sandbox import too_large
from extract.types import ExtractionLimits


def _cap_memory(memory_mb: int) -> None:
    cap = memory_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _answer(header: dict[str, Any], data: bytes) -> dict[str, Any]:
    limits = ExtractionLimits(**header["limits"])
    try:
        extraction = extract_document(
            data, header["filename"], header["content_type"], limits=limits
        )
    except ExtractionError as exc:
        return {"error": exc.to_payload()}
    except MemoryError:
        return {"error": too_large(limits).to_payload()}
    return {"extraction": dataclasses.asdict(extraction)}


def main() -> None:
    """Child entry point: header line and bytes on stdin, one JSON answer on stdout."""
    answer_stream = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt the answer
    header = json.loads(sys.stdin.buffer.readline())
    _cap_memory(int(header["limits"]["memory_mb"]))
    data = sys.stdin.buffer.read()
    try:
        answer = _answer(header, data)
    except MemoryError:
        answer = {"error": DocumentTooLargeError().to_payload()}
    answer_stream.write(json.dumps(answer).encode())
    answer_stream.close()


if __name__ == "__main__":
    main()
