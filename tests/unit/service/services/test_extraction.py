"""What the extraction service makes of the settings, and of the progress an extractor reports."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from extract import OcrOptions
from service.services.extraction import LatestProgress, limits_for
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


def test_a_late_smaller_count_never_steps_the_progress_back() -> None:
    latest = LatestProgress()

    latest(5, 40)
    latest(3, 40)  # a part that counted before the other one, reported after it
    first = latest.take()
    latest(4, 40)  # behind what was recorded already
    nothing_new = latest.take()
    latest(9, 40)
    latest(7, 40)

    assert (first, nothing_new, latest.take(), latest.take()) == ((5, 40), None, (9, 40), None)


def test_a_new_page_count_is_taken_as_it_comes() -> None:
    latest = LatestProgress()

    latest(3, 3)
    latest(0, 40)

    assert latest.take() == (0, 40)
