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

The thresholds were set on the page statistics of ``../shared/corpus``'s text
layers (``python -m bench.fidelity --layers`` prints them): in-sample, and said so in
``docs/benchmarks.md``.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

__all__ = [
    "MAX_ODD_SHARE",
    "MIN_STOPWORD_SHARE",
    "MIN_TOKENS",
    "ODD_SHARE_WITHOUT_STOPWORDS",
    "is_garbage",
    "is_odd",
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

_SPACELESS = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]")
_EDGE = "\"'“”‘’«»‹›()[]{}<>.,;:!?¡¿*•·…–—-/\\|"
_MATH_SCRIPTS = frozenset({"LATIN", "GREEK", "MATHEMATICAL"})
"""Scripts that mix in one token in mathematics (``κn``, ``αβx``)."""
_INNER_OK = frozenset("-'’.&/_()[]{}+=^−")
"""Inside a word: hyphens, apostrophes, abbreviations, paths and the brackets of math."""


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
