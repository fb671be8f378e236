"""Arabic lam-alef ligatures that MuPDF reads back to front are put in their logical order."""

from __future__ import annotations

from typing import Any

from extract.lam_alef import apply_fixes, lam_alef_fixes


def _char(c: str, x0: float, x1: float) -> dict[str, Any]:
    return {"c": c, "bbox": (x0, 0.0, x1, 10.0)}


class RawPage:
    """A page as ``page.get_text("rawdict")`` describes it: one span of characters."""

    def __init__(self, chars: list[dict[str, Any]]) -> None:
        self._chars = chars

    def get_text(self, kind: str) -> dict[str, Any]:
        assert kind == "rawdict"
        return {"blocks": [{"lines": [{"spans": [{"chars": self._chars}]}]}]}


# "خلال المال" as MuPDF reads it from a right-to-left line: the ligature in *khilal* gives a
# zero-width alef at the lam's right edge, then the lam; *al-mal* has a real alef and lam.
KHILAL = [_char("خ", 90, 98), _char("ا", 89.9, 89.9), _char("ل", 84, 89.9), _char("ل", 80, 84)]
AL_MAL = [_char(" ", 77, 80), _char("ا", 74, 77), _char("ل", 70, 74), _char("م", 64, 70),
          _char("ا", 61, 64), _char("ل", 56, 61)]  # fmt: skip


def test_a_zero_width_alef_before_its_lam_is_a_ligature_read_back_to_front() -> None:
    page = RawPage(KHILAL + AL_MAL)

    fixes = lam_alef_fixes(page, "خالل المال")

    assert fixes == {"خالل": "خلال"}  # the article's alef-lam is left alone


def test_pages_without_an_alef_before_a_lam_are_not_read_again() -> None:
    class Unread:
        def get_text(self, kind: str) -> dict[str, Any]:
            raise AssertionError("read glyphs of a page that cannot hold the defect")

    assert lam_alef_fixes(Unread(), "Plain English text, and لم يكتب") == {}


def test_fixes_replace_whole_words_only() -> None:
    fixes = {"خالل": "خلال"}

    assert apply_fixes("من خالل **خالل** البرمجة", fixes) == "من خلال **خلال** البرمجة"
    assert apply_fixes("خاللي", fixes) == "خاللي"
