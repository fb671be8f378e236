"""Arabic lam-alef ligatures read back in their logical order.

Arabic fonts draw lam followed by alef (``لا``, and ``لأ`` ``لإ`` ``لآ`` with hamza or
madda) as one ligature glyph. MuPDF gives such a glyph's two characters in the wrong
order: the alef first, with no width, at the right edge of the lam, then the lam
(``non_latin/right_to_left_01.pdf``: "اإلنتاجية" for *الإنتاجية*, "المشكالت" for
*المشكلات*, "خالل" for *خلال*). The characters are not presentation forms, so NFKC does
not help, and "ال" is also the definite article, so the text alone cannot tell a
ligature from a real alef-lam; the glyph positions can.

:func:`lam_alef_fixes` finds, per page, each word holding such a zero-width alef just
before a lam (``page.get_text("rawdict")``, read only on pages whose text has an alef
before a lam) and maps it to the word with the pair swapped; :func:`apply_fixes`
rewrites any text of that page with the map (its text blocks, the layout Markdown, the
fast path's Markdown and the fidelity reference alike).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["ALEFS", "LAM", "apply_fixes", "lam_alef_fixes", "might_hold_ligatures"]

ALEFS = frozenset("\u0627\u0623\u0625\u0622")
"""Alef, alef with hamza above, alef with hamza below, alef with madda."""
LAM = "\u0644"
_MAX_ALEF_WIDTH = 0.05
"""A ligature's alef has no width of its own (points)."""
_SAME_EDGE = 0.5
"""...and sits where the lam's glyph ends on the right (points)."""
_WORD = re.compile(r"\w+")
_ALEF_LAM = re.compile(f"[{''.join(sorted(ALEFS))}]{LAM}")


def might_hold_ligatures(text: str) -> bool:
    """Whether a page's text has an alef before a lam (the cheap test before glyphs are read)."""
    return _ALEF_LAM.search(text) is not None


def _swapped(chars: Sequence[Mapping[str, Any]]) -> str:
    """A span's characters with each zero-width alef before its lam put after it."""
    out = [str(char["c"]) for char in chars]
    index = 0
    while index + 1 < len(chars):
        alef, lam = chars[index], chars[index + 1]
        if (
            out[index] in ALEFS
            and out[index + 1] == LAM
            and alef["bbox"][2] - alef["bbox"][0] <= _MAX_ALEF_WIDTH
            and abs(alef["bbox"][0] - lam["bbox"][2]) <= _SAME_EDGE
        ):
            out[index], out[index + 1] = out[index + 1], out[index]
            index += 2
            continue
        index += 1
    return "".join(out)


def lam_alef_fixes(page: Any, text: str) -> dict[str, str]:
    """Each word of the page whose lam-alef ligatures came out reversed, mapped to the word
    as written; empty when ``text`` (the page's text) has no alef before a lam."""
    if not might_hold_ligatures(text):
        return {}
    fixes: dict[str, str] = {}
    for block in page.get_text("rawdict")["blocks"]:
        for line in block.get("lines", ()):
            for span in line["spans"]:
                chars = span["chars"]
                read = "".join(str(char["c"]) for char in chars)
                if not might_hold_ligatures(read):
                    continue
                fixed = _swapped(chars)
                for wrong, right in zip(_WORD.findall(read), _WORD.findall(fixed), strict=True):
                    if wrong != right:
                        fixes[wrong] = right
    return fixes


def apply_fixes(text: str, fixes: Mapping[str, str]) -> str:
    """``text`` with each whole word in ``fixes`` replaced by its fixed form."""
    if not fixes:
        return text
    pattern = re.compile(
        r"(?<!\w)(?:" + "|".join(map(re.escape, sorted(fixes, key=len, reverse=True))) + r")(?!\w)"
    )
    return pattern.sub(lambda found: fixes[found.group()], text)
