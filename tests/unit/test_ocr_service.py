from __future__ import annotations

import pytest
from pydantic import ValidationError

from extract import OcrOptions
from service.services.extraction import limits_for
from service.settings import Settings


def test_ocr_settings_reach_the_extraction_limits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SHORTLIST_OCR__ENGINE", "tesseract")
    monkeypatch.setenv("SHORTLIST_OCR__LANGUAGES", "de, pt")
    monkeypatch.setenv("SHORTLIST_OCR__MAX_PAGES", "7")

    limits = limits_for(Settings(_env_file=None))  # type: ignore[call-arg]

    assert limits.ocr == OcrOptions(engine="tesseract", languages=("de", "pt"), max_pages=7)


@pytest.mark.parametrize(("name", "value"), [("ENGINE", "easyocr"), ("LANGUAGES", "en;rm -rf")])
def test_a_bad_ocr_setting_is_refused_with_its_name(
    monkeypatch: pytest.MonkeyPatch, name: str, value: str
) -> None:
    monkeypatch.setenv(f"SHORTLIST_OCR__{name}", value)

    with pytest.raises(ValidationError, match=f"ocr.{name.lower()}"):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_mcp_document_list_says_which_pages_were_recognised_from_images() -> None:
    from datetime import UTC, datetime
    from uuid import uuid4

    from service.mcp import render
    from service.mcp.tools import document_entry
    from service.records import Document, Project

    now = datetime.now(UTC)
    scan = Document(
        id=uuid4(),
        project_id=uuid4(),
        name="contract.pdf",
        content_type="application/pdf",
        size_bytes=1000,
        object_key="k",
        status="ready",
        error_code=None,
        error_message=None,
        kind="pdf",
        page_count=9,
        pages_done=None,
        pages_total=None,
        content_hash="h",
        warnings=(),
        created_at=now,
        extracted_at=now,
        ocr_pages=(3, 4, 5, 6, 7, 8, 9),
    )

    text = render.documents_text(Project(uuid4(), "legal", now), [scan])

    assert "ready, 9 page(s); text recognised from images on pages 3-9" in text
    assert document_entry(scan)["ocr_pages"] == [3, 4, 5, 6, 7, 8, 9]
