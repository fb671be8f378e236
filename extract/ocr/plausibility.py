"""Is a text layer made of words? Garbage layers of any script, told without a model.

A bad OCR layer (or a font without a usable character map) gives "words" that
are not words: ``HoMep KoppeKn1pOBKH Cl>opMa`` for Russian read as Latin. Such
a page fails two checks that real text in any language passes:

* **word shapes**: a real word is written in one script, in lower case, Title
  case or capitals, with letters and at most a hyphen or apostrophe inside.
  The share of tokens (of two letters or more) shaped otherwise -- capitals
  after small letters (``HoMep``), digits between letters (``Hanoroo6nO``),
  other symbols inside (``Cl>opMa``), two scripts in one token (``BCпрo``) -- is
  :func:`odd_share`;
* **common vocabulary**: in running text in a language with a stopword list
  (bm25s ships them for English, French, German, Spanish, Italian, Portuguese,
  Dutch, the Scandinavian languages, Turkish and Russian), a fifth to a half of
  the tokens are stopwords; :func:`stopword_share` is the share of tokens that
  are a stopword of *any* of them.

:func:`is_garbage` flags a page whose odd share is at least
:data:`MAX_ODD_SHARE` and whose stopword share is below
:data:`MIN_STOPWORD_SHARE`. Scripts without spaces between words (Han, kana,
Hangul) and scripts without a list pass on word shapes alone.

A third check is for OCR layers that are words, but too many of them misread
(``aieiabership`` for *membership*): over a page that is mostly a scanned image,
in English (at least :data:`MIN_ENGLISH_STOPWORDS` of its tokens are English
stopwords), :func:`misread_share` is the share of its distinct lower-case words
holding a letter trigram no English word has (:mod:`extract.ocr.trigrams`);
:func:`is_misread` flags a page from :data:`MAX_MISREAD_SHARE`. Other languages
have no trigram table and are not judged so.

The thresholds were set on the page statistics of ``../shared/corpus``'s text
layers (``python -m bench.fidelity --layers`` prints them): in-sample, and said so in
``docs/benchmarks.md``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

from extract.ocr.trigrams import unlisted

__all__ = [
    "MAX_MISREAD_SHARE",
    "MAX_ODD_SHARE",
    "MIN_ENGLISH_STOPWORDS",
    "MIN_JUDGED_WORDS",
    "MIN_STOPWORD_SHARE",
    "MIN_TOKENS",
    "ODD_SHARE_WITHOUT_STOPWORDS",
    "english_share",
    "is_garbage",
    "is_misread",
    "is_odd",
    "misread_share",
    "odd_share",
    "stopword_share",
    "tokens",
]

MAX_ODD_SHARE = 0.3
"""A page with at least this share of oddly shaped tokens is garbage..."""
ODD_SHARE_WITHOUT_STOPWORDS = 0.2
"""...and so is one with at least this share of them..."""
MIN_STOPWORD_SHARE = 0.1
"""...when fewer than this share of its tokens are common words of any listed language."""
MIN_TOKENS = 30
"""Pages with fewer tokens are not judged."""
MAX_MISREAD_SHARE = 0.1
"""An English OCR layer with at least this share of its distinct lower-case words holding a
trigram no English word has is a poor one (:func:`is_misread`)..."""
MIN_ENGLISH_STOPWORDS = 0.1
"""...where English means at least this share of its tokens are English stopwords..."""
MIN_JUDGED_WORDS = 20
"""...and it has at least this many distinct lower-case words to judge."""

_SPACELESS = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_EDGE = "\"'“”‘’«»‹›()[]{}<>.,;:!?¡¿*•·…–—-/\\|"
_MATH_SCRIPTS = frozenset({"LATIN", "GREEK", "MATHEMATICAL"})
"""Scripts that mix in one token in mathematics (``κn``, ``αβx``)."""
_INNER_OK = frozenset("-'’.&/_()[]{}+=^−")
"""Inside a word: hyphens, apostrophes, abbreviations, paths and the brackets of math."""


@cache
def _english_stopwords() -> frozenset[str]:
    import bm25s.stopwords as lists

    return frozenset(word.casefold() for word in lists.STOPWORDS_EN)


@cache
def _stopwords() -> frozenset[str]:
    import bm25s.stopwords as lists

    names = [name for name in dir(lists) if name.startswith("STOPWORDS_")]
    return frozenset(
        word.casefold()
        for name in names
        if name not in ("STOPWORDS_CHINESE", "STOPWORDS_KOREAN")
        for word in getattr(lists, name)
    )


def _script(char: str) -> str:
    """The script of a letter, by the first word of its Unicode name."""
    try:
        name = unicodedata.name(char)
    except ValueError:
        return ""
    return name.split(" ", 1)[0]


def tokens(text: str) -> list[str]:
    """The text's words as :func:`is_odd` judges them: whitespace-separated, split at
    hyphens, their surrounding punctuation removed, with at least two letters, and
    none of a script written without spaces (Han, kana, Hangul)."""
    found: list[str] = []
    for raw in unicodedata.normalize("NFKC", text).split():
        if _SPACELESS.search(raw):
            continue
        for part in raw.split("-"):
            token = part.strip(_EDGE)
            if sum(1 for char in token if char.isalpha()) >= 2:
                found.append(token)
    return found


def is_odd(token: str) -> bool:
    """Whether a token is shaped unlike any word of any script (see the module)."""
    letters = [char for char in token if char.isalpha()]
    scripts = {_script(char) for char in letters}
    if len(scripts) > 1 and not scripts <= _MATH_SCRIPTS:
        return True
    for previous, char, following in zip(token, token[1:], token[2:], strict=False):
        if char.isdigit() and previous.isalpha() and following.isalpha():
            return True
        if char.isupper() and previous.islower():
            return True  # HoMep, not LLMs
        if not char.isalnum() and char not in _INNER_OK and not _mark(char):
            return True
    return len(token) > 1 and token[-1].isupper() and token[-2].islower()


def _mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


def odd_share(words: list[str]) -> float:
    return sum(1 for word in words if is_odd(word)) / len(words) if words else 0.0


def stopword_share(words: list[str]) -> float:
    listed = _stopwords()
    return sum(1 for word in words if word.casefold() in listed) / len(words) if words else 0.0


def is_garbage(text: str) -> bool:
    """Whether a page's text layer reads as something other than words (see the module)."""
    words = tokens(text)
    if len(words) < MIN_TOKENS:
        return False
    odd = odd_share(words)
    return odd >= MAX_ODD_SHARE or (
        odd >= ODD_SHARE_WITHOUT_STOPWORDS and stopword_share(words) < MIN_STOPWORD_SHARE
    )


def english_share(words: list[str]) -> float:
    """Share of the tokens that are English stopwords."""
    listed = _english_stopwords()
    return sum(1 for word in words if word.casefold() in listed) / len(words) if words else 0.0


def _ascii_letters(word: str) -> str:
    """A lower-case word with its accents dropped, or "" when it is not all Latin letters."""
    folded = "".join(
        char for char in unicodedata.normalize("NFKD", word) if not _mark(char)
    ).casefold()
    return folded if folded.isascii() and folded.isalpha() else ""


def _judged(words: list[str]) -> set[str]:
    """The distinct lower-case words of three letters or more, accents dropped."""
    return {folded for word in words if word.islower() and len(folded := _ascii_letters(word)) >= 3}


def misread_share(words: list[str]) -> float:
    """Share of the distinct lower-case words holding a trigram no English word has."""
    judged = _judged(words)
    return sum(1 for word in judged if unlisted(word)) / len(judged) if judged else 0.0


def is_misread(text: str) -> bool:
    """Whether an English OCR layer has too many misread words (see the module); meant for
    pages that are mostly a scanned image, where the text layer is someone's OCR."""
    words = tokens(text)
    if english_share(words) < MIN_ENGLISH_STOPWORDS or len(_judged(words)) < MIN_JUDGED_WORDS:
        return False
    return misread_share(words) >= MAX_MISREAD_SHARE
