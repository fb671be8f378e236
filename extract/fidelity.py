"""Extraction fidelity: the words of a page's text layer against the words of its Markdown.

A page's *words* are a multiset: the text is NFKC-normalised and casefolded, a
hyphen that ends a line joins its word to the next line's ("exam-\\nple" is
"example"), every Han, kana or Hangul character is a word of its own (those
scripts do not separate words by spaces), and a word is otherwise a maximal run
of letters, digits and combining marks (punctuation and ``_`` separate words).
The Markdown is first stripped of what the extractor adds: page markers and other
HTML comments, the HTML tags it keeps in tables (``<br>``, ``<td>``…), link
targets and image references, and character entities; Markdown punctuation
(``#``, ``|``, ``**``, ``~~``, backticks) separates words like any punctuation.

*Recall* is the share of the text layer's words the Markdown keeps, *precision*
the share of the Markdown's words that are in the text layer (so glued words,
split identifiers and markup artefacts count against it), both over the multisets.
The bench (``bench/fidelity.py``), the corpus tests and the extractor's own
per-page check (:mod:`extract.reconcile`) all measure with these functions.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

__all__ = [
    "EXTRACTOR_TAG",
    "Fidelity",
    "compare",
    "is_cjk",
    "join_hyphenated",
    "markdown_words",
    "normalise",
    "strip_markup",
    "words",
]

_LINE_END_HYPHEN = re.compile(r"(\w)[-\u00ad\u2010]\s*\n\s*(\w)")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
EXTRACTOR_TAG = re.compile(
    r"</?(?:br|sup|sub|u|mark|table|thead|tbody|tfoot|tr|th|td|caption)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
"""The HTML tags the extractors write (line breaks and styles in table cells, HTML tables);
other tag-like text (``<div id="x">`` in a code listing) is the document's own."""
_IMAGE = re.compile(r"!\[[^\]\n]*\]\([^)\n]*\)")
_LINK_TARGET = re.compile(r"\]\((?:[^()\s]|\([^()\s]*\))*(?:\s+\"[^\"\n]*\")?\)")
_CJK_RANGES = (
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x2E80, 0x2FDF),  # CJK radicals
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3100, 0x312F),  # Bopomofo
    (0x3130, 0x318F),  # Hangul compatibility Jamo
    (0x31F0, 0x31FF),  # Katakana extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xAC00, 0xD7AF),  # Hangul syllables
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3FFFF),  # CJK extensions B and later
)


def is_cjk(char: str) -> bool:
    """Whether ``char`` is written without spaces between words (Han, kana, Hangul)."""
    code = ord(char)
    return any(low <= code <= high for low, high in _CJK_RANGES)


def _is_word_char(char: str) -> bool:
    return char.isalnum() or unicodedata.category(char).startswith("M")


def _tokens(text: str) -> Iterable[str]:
    word: list[str] = []
    for char in text:
        if _is_word_char(char) and char != "_":
            if is_cjk(char):
                if word:
                    yield "".join(word)
                    word = []
                yield char
            else:
                word.append(char)
        elif word:
            yield "".join(word)
            word = []
    if word:
        yield "".join(word)


def join_hyphenated(text: str) -> str:
    """``text`` with each word hyphenated at a line end joined ("exam-\\nple" is "example")."""
    return _LINE_END_HYPHEN.sub(r"\1\2", text) if "\n" in text else text


def normalise(text: str) -> str:
    """NFKC, casefolded, with hyphens at line ends joined."""
    return join_hyphenated(unicodedata.normalize("NFKC", text)).casefold()


def words(text: str) -> Counter[str]:
    """The multiset of words of plain text (a text layer, or stripped Markdown)."""
    return Counter(_tokens(normalise(text)))


def strip_markup(markdown: str) -> str:
    """Markdown as the words a reader sees: comments, tags, link targets and images removed.

    A ``<br>`` (and every other tag) becomes a line break, so words on either
    side of it stay apart; entities are decoded; ``\\`` escapes are dropped.
    """
    text = _COMMENT.sub("\n", markdown)
    text = _IMAGE.sub(" ", text)
    text = _LINK_TARGET.sub("] ", text)
    text = EXTRACTOR_TAG.sub("\n", text)
    text = html.unescape(text)
    return re.sub(r"\\(?=[^\w\s])", "", text)


def markdown_words(markdown: str) -> Counter[str]:
    """The multiset of words of extracted Markdown, its markup stripped."""
    return words(strip_markup(markdown))


class Fidelity(NamedTuple):
    """How one extraction's words compare with its text layer's."""

    reference: int
    """Words in the text layer."""
    extracted: int
    """Words in the Markdown."""
    matched: int
    """Words in both (multiset intersection)."""

    @property
    def recall(self) -> float:
        """Share of the text layer's words kept (1.0 when the layer has none)."""
        return self.matched / self.reference if self.reference else 1.0

    @property
    def precision(self) -> float:
        """Share of the Markdown's words that are in the text layer (1.0 when it has none)."""
        return self.matched / self.extracted if self.extracted else 1.0

    @classmethod
    def total(cls, parts: Iterable[Fidelity]) -> Fidelity:
        """The fidelity of several pages taken together."""
        reference = extracted = matched = 0
        for part in parts:
            reference += part.reference
            extracted += part.extracted
            matched += part.matched
        return cls(reference, extracted, matched)


def compare(reference: Counter[str], extracted: Counter[str]) -> Fidelity:
    """Recall and precision of ``extracted`` against ``reference`` (both multisets of words)."""
    matched = sum((reference & extracted).values())
    return Fidelity(sum(reference.values()), sum(extracted.values()), matched)
