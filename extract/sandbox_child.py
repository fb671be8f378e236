"""The sandbox child: ``python -m extract.sandbox_child`` (started by :mod:`extract.sandbox`).

Serves requests until its stdin closes: each is one JSON header line (with
``size``, the byte count) and the document bytes; each answer is one JSON line
on stdout, after optional ``{"progress": [pages_done, pages]}`` lines. The address space is capped
before the first document is read. Operations (``op``):

* ``extract``: the whole document, as :func:`extract.extract_document`;
* ``plan``: a PDF of at least ``split_min_pages`` pages is only checked and
  answered with its page count and the pages past its OCR page budget (the parent
  then asks for parts); anything else is extracted as with ``extract``;
* ``part``: pages ``[start, stop)`` of a PDF as a :class:`extract.pdf.PdfPart`;
* ``render``: one page drawn as :func:`extract.page_render.render_page` (the request's
  ``render`` field is a :class:`~extract.page_render.RenderRequest`).

With ``--warm`` it first caps its memory and imports the PDF libraries, so it can
wait as a spare (:class:`extract.sandbox.SandboxPool`); a child whose stdin closes
exits quietly.
"""

from __future__ import annotations

import importlib
import json
import os
import resource
import sys
from typing import IO, Any

from extract.detect import detect_kind
from extract.document import extract_document
from extract.errors import DocumentTooLargeError, ExtractionError, UnsupportedFormatError
from extract.page_render import RenderRequest, render_page
from extract.pdf import extract_pdf_part, survey_pdf
from extract.sandbox import too_large
from extract.types import ExtractionLimits
from extract.wire import from_wire, to_wire


def _cap_memory(memory_mb: int) -> None:
    cap = memory_mb * 1024 * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        cap = min(cap, hard)
    if soft != resource.RLIM_INFINITY and soft <= cap:
        return  # capped already (a long-lived child keeps its first cap)
    resource.setrlimit(resource.RLIMIT_AS, (cap, cap))


def _answer(header: dict[str, Any], data: bytes, out: IO[bytes]) -> dict[str, Any]:
    limits = from_wire(header["limits"], ExtractionLimits, "request")
    filename, content_type = header["filename"], header["content_type"]

    def progress(pages_done: int, pages: int) -> None:
        out.write(json.dumps({"progress": [pages_done, pages]}).encode() + b"\n")
        out.flush()

    try:
        op = header.get("op", "extract")
        if op == "part":
            start, stop = (int(number) for number in header["pages"])
            part = extract_pdf_part(
                data,
                limits,
                range(start, stop),
                progress=progress,
                layout_failure=header.get("layout_failure"),
                ocr_left_out=[int(index) for index in header.get("ocr_left_out", ())],
            )
            return {"part": to_wire(part)}
        if op == "render":
            request = from_wire(header["render"], RenderRequest, "page request")
            return {"rendered": to_wire(render_page(data, request))}
        if op == "plan":
            kind, warnings = detect_kind(data, filename, content_type)
            if kind == "pdf":
                survey = survey_pdf(data, limits)
                if survey.page_count >= int(header["split_min_pages"]):
                    plan = {
                        "page_count": survey.page_count,
                        "warnings": warnings,
                        "ocr_left_out": list(survey.ocr_left_out(limits)),
                    }
                    return {"plan": plan}
        elif op != "extract":
            raise UnsupportedFormatError(f"Unknown sandbox operation {op!r}")
        extraction = extract_document(
            data, filename, content_type, limits=limits, progress=progress
        )
    except ExtractionError as exc:
        return {"error": exc.to_payload()}
    except MemoryError:
        return {"error": too_large(limits).to_payload()}
    return {"extraction": to_wire(extraction)}


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
    """Child entry point: requests on stdin, answers on stdout, until stdin closes.

    ``--warm MEMORY_MB``: cap the address space at once, load the PDF libraries, then wait.
    """
    answer_stream = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints must not corrupt the answer
    if sys.argv[1:2] == ["--warm"]:
        _cap_memory(int(sys.argv[2]))
        _load_pdf_libraries()
    requests = sys.stdin.buffer
    while line := requests.readline():
        header = json.loads(line)
        _cap_memory(int(header["limits"]["memory_mb"]))
        data = requests.read(int(header["size"]))
        try:
            answer = _answer(header, data, answer_stream)
        except MemoryError:
            answer = {"error": DocumentTooLargeError().to_payload()}
        del data
        answer_stream.write(json.dumps(answer).encode() + b"\n")
        answer_stream.flush()
    answer_stream.close()


if __name__ == "__main__":
    main()
    # The answers are out; tearing down the interpreter (and PyMuPDF's and ONNX's state)
    # would only keep the parent waiting.
    sys.stderr.flush()
    os._exit(0)
