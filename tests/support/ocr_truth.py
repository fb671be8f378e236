"""Ground truth for OCR: text pages turned into images, and how close recognised text comes.

Shared by the OCR tests and ``bench/ocr.py``. A page of a text PDF is its own
ground truth: its text layer is what an image of it should read as.
"""

from __future__ import annotations

import difflib
import re
from collections import Counter
from typing import Any, cast

import pymupdf

_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased runs of letters and digits (punctuation and layout ignored)."""
    return [word.lower() for word in _WORD.findall(text)]


def word_recall(truth: str, found: str) -> float:
    """Share of the truth's words (counted with multiplicity) that the found text has."""
    expected = Counter(words(truth))
    if not expected:
        return 1.0
    got = Counter(words(found))
    return sum(min(count, got[word]) for word, count in expected.items()) / sum(expected.values())


def _levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, char_a in enumerate(a, start=1):
        current = [i]
        for j, char_b in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char_a != char_b))
            )
        previous = current
    return previous[-1]


def character_error_rate(truth: str, found: str) -> float:
    """Edits per truth character, over the word sequences (reading order counts).

    Words are aligned first (difflib), then each replaced stretch is compared
    character by character, so a page costs milliseconds rather than the full
    quadratic comparison; the result is an upper bound of the true CER.
    """
    a, b = words(truth), words(found)
    if not a:
        return 0.0 if not b else 1.0
    edits = 0
    matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        left, right = " ".join(a[i1:i2]), " ".join(b[j1:j2])
        edits += _levenshtein(left, right) if tag == "replace" else len(left) + len(right)
    return edits / len(" ".join(a))


def page_text(path: str, index: int) -> str:
    """The text layer of one page of a PDF (the truth its image should read as)."""
    with cast(Any, pymupdf).open(path) as document:
        return str(document[index].get_text())


def image_only_pdf(path: str, pages: list[int], dpi: int) -> bytes:
    """The given pages of a PDF re-made as a scan: each a grayscale image, no text layer."""
    scan: Any = pymupdf.open()
    with cast(Any, pymupdf).open(path) as document:
        for index in pages:
            source = document[index]
            pixmap = source.get_pixmap(dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False)
            page = scan.new_page(width=source.rect.width, height=source.rect.height)
            page.insert_image(page.rect, pixmap=pixmap)
    data = bytes(scan.tobytes(deflate=True))
    scan.close()
    return data


def page_image(path: str, index: int, dpi: int, clip: tuple[float, float, float, float]) -> Any:
    """Part of a PDF page (``clip`` in points) as a PyMuPDF grayscale pixmap."""
    with cast(Any, pymupdf).open(path) as document:
        page = document[index]
        return page.get_pixmap(
            dpi=dpi, colorspace=pymupdf.csGRAY, alpha=False, clip=pymupdf.Rect(*clip)
        )
