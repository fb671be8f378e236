"""The sandbox child: ``python -m extract.sandbox_child`` (started by :mod:`extract.sandbox`).

Reads one JSON header line and the document bytes from stdin, caps its own
address space, extracts, and writes one JSON answer to stdout. With ``--warm``
it first imports the PDF libraries, so it can wait as a spare
(:class:`extract.sandbox.SandboxPool`); a spare whose stdin closes before a
document arrives exits quietly.
"""

from __future__ import annotations

import dataclasses
import importlib
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
    limits = ExtractionLimits.from_payload(header["limits"])
    try:
        extraction = extract_document(
            data, header["filename"], header["content_type"], limits=limits
        )
    except ExtractionError as exc:
        return {"error": exc.to_payload()}
    except MemoryError:
        return {"error": too_large(limits).to_payload()}
    return {"extraction": dataclasses.asdict(extraction)}


_PDF_LIBRARIES = ("pymupdf", "pymupdf4llm")
"""What reading a PDF loads: most of a PDF child's start-up (the other readers load in
a fraction of a second)."""


def _load_pdf_libraries() -> None:
    """Import what extracting a PDF needs (the slow part of a PDF child's start).

    Under the memory cap, like everything the child does: when the libraries do not
    fit, the child waits anyway and its document meets the same wall a fresh child's
    would.
    """
    try:
        for module in _PDF_LIBRARIES:
            importlib.import_module(module)
    except MemoryError:
        pass


def main() -> None:
    """Child entry point: header line and bytes on stdin, one JSON answer on stdout.

    ``--warm MEMORY_MB``: cap the address space at once, load the PDF libraries, then wait.
    """
    answer_stream = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt the answer
    if sys.argv[1:2] == ["--warm"]:
        _cap_memory(int(sys.argv[2]))
        _load_pdf_libraries()
    line = sys.stdin.buffer.readline()
    if not line:
        return  # a spare nobody needed
    header = json.loads(line)
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
    # The answer is out; tearing down the interpreter (and PyMuPDF's and ONNX's state)
    # would only keep the parent waiting.
    sys.stderr.flush()
    os._exit(0)
