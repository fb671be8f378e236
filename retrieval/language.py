"""Which language a text is in: a script count, then a stopword vote. Offline, no model.

Two steps, after the classic stopword approach to language identification
(Grefenstette, "Comparing two language identification schemes", JADT 1995:
short-word frequencies identify a language about as well as trigrams once a
text has a few dozen words):

1. **Script.** Letters are counted by script. Kana (Hiragana, Katakana) means
   Japanese; Han without kana means Chinese; Hangul means Korean. Cyrillic,
   Greek, Arabic and Hebrew letters name their most likely language when they
   are the majority. CJK text is then tokenised into bigrams whatever it is
   called (see :mod:`retrieval.tokenize`); the name only says so.
2. **Stopwords**, for Latin-script text: each language with a stopword list
   scores the share of the text's words that are its stopwords; the best wins
   if it clears :data:`MIN_STOPWORD_SHARE` and beats the runner-up by
   :data:`MIN_MARGIN`, else the answer is ``None`` (undecided, e.g. a table of
   numbers or a three-word query) and callers keep their default.

Names are PyStemmer's (Snowball) names, so a detected language selects its
stemmer directly.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable

import bm25s.stopwords

SAMPLE_CHARS = 3_000
"""Only the first this many characters are read: enough words, bounded cost."""
MIN_STOPWORD_SHARE = 0.08
"""Below this share of stopwords no Latin-script language is named."""
MIN_MARGIN = 1.3
"""The best language's share must be this many times the runner-up's."""
MIN_WORDS = 4
"""Fewer words than this are not enough to vote on."""

CJK_LANGUAGES = frozenset({"chinese", "japanese", "korean"})
"""Languages whose text is tokenised into character bigrams, not stemmed."""

_STOPWORDS: dict[str, frozenset[str]] = {
    name: frozenset(word.casefold() for word in words)
    for name, words in (
        ("english", bm25s.stopwords.STOPWORDS_EN),
        ("french", bm25s.stopwords.STOPWORDS_FRENCH),
        ("german", bm25s.stopwords.STOPWORDS_GERMAN),
        ("spanish", bm25s.stopwords.STOPWORDS_SPANISH),
        ("italian", bm25s.stopwords.STOPWORDS_ITALIAN),
        ("portuguese", bm25s.stopwords.STOPWORDS_PORTUGUESE),
        ("dutch", bm25s.stopwords.STOPWORDS_DUTCH),
        ("danish", bm25s.stopwords.STOPWORDS_DANISH),
        ("norwegian", bm25s.stopwords.STOPWORDS_NORWEGIAN),
        ("swedish", bm25s.stopwords.STOPWORDS_SWEDISH),
        ("turkish", bm25s.stopwords.STOPWORDS_TURKISH),
    )
}
_LANGUAGES_OF: dict[str, tuple[str, ...]] = {}
"""stopword -> the languages it is a stopword of."""
for _name, _words in _STOPWORDS.items():
    for _word in _words:
        _LANGUAGES_OF[_word] = (*_LANGUAGES_OF.get(_word, ()), _name)
_SCRIPT_LANGUAGE = {
    "CYRILLIC": "russian",
    "GREEK": "greek",
    "ARABIC": "arabic",
    "HEBREW": "yiddish",  # Snowball's only Hebrew-script stemmer; better than none
}
_WORD_RE = re.compile(r"[^\W\d_]+")


_SCRIPT_RES = {
    "KANA": re.compile("[\u3040-\u30ff\u31f0-\u31ff]"),
    "HAN": re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    "HANGUL": re.compile("[\u1100-\u11ff\u3130-\u318f\uac00-\ud7af]"),
    "LATIN": re.compile("[A-Za-z\u00c0-\u024f\u1e00-\u1eff]"),
    "CYRILLIC": re.compile("[\u0400-\u04ff]"),
    "GREEK": re.compile("[\u0370-\u03ff]"),
    "ARABIC": re.compile("[\u0600-\u06ff]"),
    "HEBREW": re.compile("[\u0590-\u05ff]"),
}


_ASCII_NON_LETTERS = bytes(b for b in range(128) if not chr(b).isalpha())
"""ASCII's bytes but its 52 letters: deleting them from a text's ASCII part leaves its
Latin letters there."""
_ASCII_RE = re.compile("[\x00-\x7f]+")


def script_counts(text: str) -> Counter[str]:
    """Letters of ``text`` by script (``"LATIN"``, ``"HAN"``, ``"KANA"``, ``"CYRILLIC"``…).

    Every script's letters but Latin's are outside ASCII, so each pattern reads only the text's
    other characters (a few in most texts), and ASCII letters are counted once, as Latin, by
    deleting every other byte of the text's ASCII part (one C call, no list of matches)."""
    latin = len(text.encode("ascii", "ignore").translate(None, _ASCII_NON_LETTERS))
    if text.isascii():
        return Counter({"LATIN": latin})
    rest = _ASCII_RE.sub("", text)
    counts = Counter(
        {script: len(pattern.findall(rest)) for script, pattern in _SCRIPT_RES.items()}
    )
    counts["LATIN"] += latin
    return counts


def stopword_shares(words: Iterable[str]) -> dict[str, float]:
    """Per language, the share of ``words`` that are its stopwords (each distinct word is
    case-folded and looked up once)."""
    counted = Counter(words)
    total = sum(counted.values())
    if not total:
        return {}
    hits = dict.fromkeys(_STOPWORDS, 0)
    for word, count in counted.items():
        for name in _LANGUAGES_OF.get(word.casefold(), ()):
            hits[name] += count
    return {name: count / total for name, count in hits.items()}


def detect_language(text: str) -> str | None:
    """The Snowball name of ``text``'s language, ``"chinese"``/``"japanese"``/``"korean"``
    for CJK text, or ``None`` when the text does not say clearly enough."""
    sample = unicodedata.normalize("NFKC", text[:SAMPLE_CHARS])
    scripts = script_counts(sample)
    letters = sum(scripts.values())
    if not letters:
        return None
    cjk = scripts["HAN"] + scripts["KANA"] + scripts["HANGUL"]
    if cjk >= 0.3 * letters:
        if scripts["KANA"] >= 0.05 * cjk:
            return "japanese"
        if scripts["HANGUL"] >= 0.5 * cjk:
            return "korean"
        return "chinese"
    script, count = max(
        ((s, n) for s, n in scripts.items() if s not in ("LATIN", "HAN", "KANA", "HANGUL")),
        key=lambda item: item[1],
        default=("", 0),
    )
    if count > scripts["LATIN"]:
        return _SCRIPT_LANGUAGE.get(script)
    words = _WORD_RE.findall(sample)
    if len(words) < MIN_WORDS:
        return None
    ranked = sorted(stopword_shares(words).items(), key=lambda item: -item[1])
    (best, share), (_, second) = ranked[0], ranked[1]
    if share < MIN_STOPWORD_SHARE or share < MIN_MARGIN * second:
        return None
    return best
