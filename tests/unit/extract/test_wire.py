"""The sandbox's wire format: every dataclass that crosses it survives JSON, field for field,
and an answer that does not fit is refused as a corrupt document."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from extract import CorruptDocumentError, ExtractionLimits, OcrOptions
from extract.ocr import OcrResult
from extract.pdf import PdfPart
from extract.sandbox import _field
from extract.types import Extraction, Figure, OcrLine
from extract.wire import from_wire, to_wire


def _over_json(value: object) -> Any:
    """``value`` as the other process reads it: encoded, sent as one JSON line, decoded."""
    return json.loads(json.dumps(to_wire(value)))


def _every_field_set() -> PdfPart:
    ocr = OcrResult(
        engine="rapidocr",
        unavailable="no engine",
        texts={2: "recognised", 10: "more"},
        lines={2: [(0.1, 0.2, 0.8, 0.25, "recognised")], 10: [(0.0, 0.0, 1.0, 0.1, "more")]},
        illegible=[3],
        over_page_budget=[4],
        over_time_budget=[5],
        failed=[6],
        first_failure="boom",
        max_pages=100,
        seconds=1.5,
    )
    part = PdfPart(
        page_count=20,
        start=2,
        bodies=("a", "b", "c"),
        scanned=(7,),
        ocr=ocr,
        unreadable=(8,),
        read_error="bad xref",
        over_budget=(9,),
        beyond_page_budget=(11,),
        failed=(12,),
        layout_failure="cycle",
        dropped_text=(13,),
        unfaithful=(14,),
        vertical=(15,),
        simple=(16,),
        implausible=(17,),
        figures=(Figure(3, (10.0, 20.0, 300.0, 400.0), "Figure 2: a chart", "Figure 2"),),
    )
    defaults = PdfPart(page_count=0, start=0, bodies=())
    unset = [
        f.name
        for f in dataclasses.fields(PdfPart)
        if getattr(part, f.name) == getattr(defaults, f.name)
    ]
    assert not unset, f"set these too, so the round trip checks them: {unset}"
    return part


def test_a_part_with_every_field_set_survives_the_trip_as_it_was_sent() -> None:
    part = _every_field_set()

    assert from_wire(_over_json(part), PdfPart, "part") == part


def test_an_extraction_and_the_limits_survive_the_trip() -> None:
    figure = Figure(1, (1.0, 2.0, 3.0, 4.0), "Fig. 1. A map", "Figure 1")
    line = OcrLine(1, (0.1, 0.2, 0.9, 0.25), "x")
    extraction = Extraction(
        "<!-- page 1 -->\n\nx\n", 1, (0,), "pdf", ("w",), (1,), (figure,), (line,)
    )
    limits = ExtractionLimits(ocr=OcrOptions(engine="tesseract", languages=("pt",), dpi=300))

    assert from_wire(_over_json(extraction), Extraction, "text") == extraction
    assert from_wire(_over_json(limits), ExtractionLimits, "request") == limits


@pytest.mark.parametrize(
    ("payload", "shape", "says"),
    [
        ({"kind": "pdf", "markdown": "x", "page_count": "many", "page_offsets": [0]}, Extraction, "page_count"),
        ({"kind": "exe", "markdown": "x", "page_count": 1, "page_offsets": [0]}, Extraction, "kind"),
        ({"kind": "pdf", "markdown": "x", "page_count": 2, "page_offsets": [0]}, Extraction, "page_offsets"),
        ({"page_count": 1, "start": 0, "bodies": ["x"], "scanned": ["seven"]}, PdfPart, "scanned"),
        ({"page_count": 1, "start": 0, "bodies": ["x"], "ocr": {"texts": {"x": "y"}}}, PdfPart, "texts"),
        ({"start": 0, "bodies": ["x"]}, PdfPart, "page_count"),
        ([1, 2], PdfPart, "object"),
    ],
)  # fmt: skip
def test_an_answer_that_does_not_fit_is_a_corrupt_document_naming_the_field(
    payload: object, shape: type[object], says: str
) -> None:
    with pytest.raises(CorruptDocumentError, match="malformed") as refused:
        from_wire(payload, shape, "answer")

    assert says in refused.value.message


def test_an_answer_without_what_was_asked_for_is_a_corrupt_document() -> None:
    with pytest.raises(CorruptDocumentError, match="without 'part'"):
        _field({"extraction": {}}, "part")
