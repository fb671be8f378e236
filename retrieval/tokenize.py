"""Turn text into BM25 terms, the same way for passages and queries.

Steps: NFKC, casefold, then split into words (runs of letters, digits and
combining marks) and CJK runs.

* A word loses the combining marks of Latin letters (``"Café"`` → ``"cafe"``;
  Devanagari or Arabic vowel signs are kept), in English has its British
  endings folded to American ones (:func:`fold_spelling`), is dropped if it
  is a stopword of the language, then is Snowball-stemmed with PyStemmer;
  in English the stem then joins its derivational family where Snowball
  leaves two (:func:`fold_derivation`: *conclude* and *conclusion*,
  *summarize* and *summary*).
* A run of Han, Hiragana, Katakana or Hangul characters becomes overlapping
  character bigrams (``"机器学习"`` → ``机器 器学 学习``); a one-character run
  is kept as a unigram. Passages also index every CJK character as a unigram,
  so a one-character query word (``"猫"``) still matches inside longer runs.
  (bm25s's own tokenizer keeps a whole CJK sentence as one token, so Chinese
  and Japanese queries would silently match nothing.)

A language PyStemmer has no stemmer for (see ``Stemmer.algorithms()``) gets
no stemming, and one bm25s has no stopword list for gets no stopwords; both
are still tokenised and folded. :attr:`Tokenizer.config` names all of this
and is part of the chunk-index cache key. Passage terms are stored as integer
ids (:meth:`Tokenizer.document_term_ids`), which keeps indexing and query-time
lookups cheap.
"""

from __future__ import annotations

import re
import string
import threading
import unicodedata
from collections.abc import Iterable, Sequence
from typing import cast

import bm25s.stopwords
import Stemmer

TOKENIZER_VERSION = 4
DEFAULT_LANGUAGE = "english"
STEMMED_LANGUAGES = frozenset(Stemmer.algorithms())
"""Languages PyStemmer has a Snowball stemmer for."""

_CJK = (
    "\u1100-\u11ff\u3005\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\U00020000-\U0002fa1f"
)


def _combining_mark_ranges() -> str:
    """A character-class body of the combining marks of the Basic Multilingual Plane.

    ``re``'s ``\\w`` leaves them out, which would cut Devanagari or Thai words
    apart. Marks beyond the BMP (a few historic scripts) are left out: a
    character class reaching past U+FFFF makes ``re`` several times slower.
    """
    ranges: list[str] = []
    first = previous = -2
    for code in range(0x300, 0x10000):
        if unicodedata.category(chr(code))[0] != "M":
            continue
        if code != previous + 1:
            if first >= 0:
                ranges.append(f"{chr(first)}-{chr(previous)}")
            first = code
        previous = code
    ranges.append(f"{chr(first)}-{chr(previous)}")
    return "".join(ranges)


_MARKS = _combining_mark_ranges()
_WORD_RE = re.compile(rf"[\w{_MARKS}]+")
"""Words of text without CJK characters (the common case)."""
ASCII_WORD_CHARS = frozenset(string.ascii_lowercase + string.digits + "_")
"""The characters of a word in casefolded ASCII text: ``_WORD_RE``'s there."""
_ASCII_NON_WORD = str.maketrans(
    dict.fromkeys((chr(code) for code in range(128) if chr(code) not in ASCII_WORD_CHARS), " ")
)
"""Every other ASCII character, as a space: casefolded ASCII text (most passages) splits into
its words with ``translate`` and ``split``, a quarter faster than a regex of those characters
finds them, and that several times faster than ``_WORD_RE``'s large character class."""
_MIXED_RE = re.compile(rf"[{_CJK}]+|(?:[^\W{_CJK}]|[{_MARKS}])+")
"""Words and CJK runs, for text that has CJK characters."""
_CJK_RE = re.compile(rf"[{_CJK}]")
_HAN_KANA = "\u3005\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_KANA_GAP_RE = re.compile(rf"(?<=[{_HAN_KANA}])(?:\s|<br\s*/?>)+(?=[{_HAN_KANA}])")
"""Line breaks, spaces and ``<br>`` between Han or kana characters (not Hangul:
Korean separates words with spaces)."""
_MEMO_LIMIT = 500_000
"""Distinct words remembered per tokenizer before the memo starts afresh."""

_STOPWORDS: dict[str, Iterable[str]] = {
    "english": bm25s.stopwords.STOPWORDS_EN,
    "porter": bm25s.stopwords.STOPWORDS_EN,
    "danish": bm25s.stopwords.STOPWORDS_DANISH,
    "dutch": bm25s.stopwords.STOPWORDS_DUTCH,
    "dutch_porter": bm25s.stopwords.STOPWORDS_DUTCH,
    "french": bm25s.stopwords.STOPWORDS_FRENCH,
    "german": bm25s.stopwords.STOPWORDS_GERMAN,
    "italian": bm25s.stopwords.STOPWORDS_ITALIAN,
    "norwegian": bm25s.stopwords.STOPWORDS_NORWEGIAN,
    "portuguese": bm25s.stopwords.STOPWORDS_PORTUGUESE,
    "russian": bm25s.stopwords.STOPWORDS_RUSSIAN,
    "spanish": bm25s.stopwords.STOPWORDS_SPANISH,
    "swedish": bm25s.stopwords.STOPWORDS_SWEDISH,
    "turkish": bm25s.stopwords.STOPWORDS_TURKISH,
}

_INTERROGATIVES: dict[str, str] = {
    "english": "what which who whom whose when where why how whether",
    "porter": "what which who whom whose when where why how whether",
}
"""Question words a language's stopword list lacks (bm25s keeps *what*, *who*, *how*...):
function words of a question, though a passage may use them as words."""


def fold_accents(word: str) -> str:
    """Drop combining marks that follow a Latin letter (``"Ça"`` → ``"Ca"``)."""
    if word.isascii():
        return word
    kept: list[str] = []
    after_latin = False
    for char in unicodedata.normalize("NFD", word):
        if unicodedata.combining(char):
            if after_latin:
                continue
        else:
            after_latin = _is_latin(char)
        kept.append(char)
    return unicodedata.normalize("NFC", "".join(kept))


_SPELLING_FOLDED = frozenset({"english", "porter"})
"""Languages whose British and American spellings :func:`fold_spelling` merges."""
_SPELLING_RE = re.compile(r"(?:(?<=\w{3})(is|ys)(e|ed|es|ing|ation|ations)|(?<=\w{3})(our)(s?))$")


def fold_spelling(word: str) -> str:
    """British to American endings: ``-ise``/``-yse`` → ``-ize``/``-yze``, ``-our`` → ``-or``.

    ``organise``, ``organised``, ``organisation`` → ``organize``…; ``analyse`` →
    ``analyze``; ``colour``, ``behaviours`` → ``color``, ``behaviors``. Only
    words of six letters or more change (``rise``, ``four`` and ``your`` stay),
    and the same folding applies to passages and queries, so a word that folds
    needlessly (``promise`` → ``promize``) still matches itself.
    """
    if len(word) < 6 or not word.isascii():
        return word
    return _SPELLING_RE.sub(_american, word)


_DERIVED = frozenset({"english", "porter"})
"""Languages whose Snowball stems :func:`fold_derivation` joins into derivational families."""
_DERIVATION_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # conclud/conclus, decid/decis, divid/divis, persuad/persuas (not -ead: plead, spread)
    (re.compile(r"(?:(?<=\w{3}[iou])|(?<=\w{2}[^e]a))d$"), "s"),
    (re.compile(r"(?<=\w{4})(?<=[aeoy]s)i$"), ""),  # analysi/analys, hypothesi, diagnosi
    (re.compile(r"(?<=\w{2})yz$"), "ys"),  # analyz/analys, paralyz/paralys
    (re.compile(r"(?<=\w{3})ari$"), "ar"),  # summari/summar, binari/binar
    (re.compile(r"(?<=\w{2})uct$"), "uc"),  # introduct/introduc, reduct/reduc, product/produc
    (re.compile(r"(?<=\w{2})umpt$"), "um"),  # assumpt/assum, consumpt/consum
    (re.compile(r"(?<=\w{2})ipt$"), "ib"),  # descript/describ, prescript/prescrib
    (re.compile(r"(?<=\w{2})init$"), "in"),  # definit/defin
)
"""Stem endings Snowball leaves apart within one family, rewritten to one form. The same
rewrite applies to every stem, so a stem that changes needlessly still matches itself;
the rules are kept narrow so that two unrelated words rarely meet (``bench/derivation.py``
measures what they change)."""


_DERIVATION_ENDS = frozenset("dizt")
"""The last letters of every stem a rule of :data:`_DERIVATION_RULES` rewrites."""


_NOT_DERIVED = frozenset({"incid", "claud", "coincid"})
"""Stems a rule would join with an unrelated family (*incidence* is not *incision*, *Claude*
not *clause*), found by reading ``bench/derivation.py``'s list of what the rules join."""


def fold_derivation(stem: str) -> str:
    """One English stem for a derivational family Snowball splits.

    *conclude*, *concluding* (``conclud``) and *conclusion*, *conclusive* (``conclus``)
    → ``conclus``; *summarize* (``summar``) and *summary* (``summari``) → ``summar``;
    *analysis* and *analyze* → ``analys``; *introduction* and *introduce* → ``introduc``;
    *description* and *describe* → ``describ``. (*determine* and *determinant* already
    share ``determin``.)
    """
    if len(stem) < 5 or stem[-1] not in _DERIVATION_ENDS or stem in _NOT_DERIVED:
        return stem
    if not stem.isascii():
        return stem
    for pattern, replacement in _DERIVATION_RULES:
        folded = pattern.sub(replacement, stem, count=1)
        if folded != stem:
            return folded
    return stem


def _american(match: re.Match[str]) -> str:
    if match.group(1):
        return f"{match.group(1)[0]}z{match.group(2)}"
    return f"or{match.group(4)}"


def _is_latin(char: str) -> bool:
    return char.isascii() or "\u00c0" <= char <= "\u024f" or "\u1e00" <= char <= "\u1eff"


def cjk_terms(run: str, *, unigrams: bool) -> list[str]:
    """Overlapping bigrams of a CJK run, plus each character when ``unigrams``."""
    if len(run) == 1:
        return [run]
    bigrams = [run[i : i + 2] for i in range(len(run) - 1)]
    return [*bigrams, *run] if unigrams else bigrams


TERM_MEMO_WORDS = 200_000
"""Words a tokenizer remembers the terms of (about 20 MB), then forgets all at once."""


class Tokenizer:
    """Terms for BM25, and the ids passages' terms are stored as. Safe to share between threads.

    Passage terms are numbered from 1 as they are first seen; the numbering
    lasts as long as the tokenizer, so term matrices it built can be searched
    together. It only grows, by about 100 bytes per distinct term.
    """

    def __init__(
        self,
        language: str = DEFAULT_LANGUAGE,
        *,
        share_ids_with: Tokenizer | None = None,
        derivation: bool = True,
    ) -> None:
        """
        Args:
            language: Snowball name of the stemmer and stopword list.
            share_ids_with: Another tokenizer whose term numbering this one joins, so
                passages of several languages can be searched together.
            derivation: Join derivational families (:func:`fold_derivation`) where the
                language has rules; ``False`` only to measure what they change.
        """
        self.language = language.strip().lower()
        self.stems = self.language in Stemmer.algorithms()
        self._stemmer = Stemmer.Stemmer(self.language) if self.stems else None
        self._lock = threading.Lock()
        """Guards the stemmer: PyStemmer objects are not thread-safe."""
        self.stopwords = frozenset(
            fold_accents(unicodedata.normalize("NFKC", word).casefold())
            for word in _STOPWORDS.get(self.language, ())
        )
        self.function_words = self.stopwords | frozenset(
            _INTERROGATIVES.get(self.language, "").split()
        )
        """Its stopwords and question words: what a question in this language says besides
        its content (dropped from the query by other languages' tokenizers, see
        :meth:`query_terms`)."""
        self.folds_spelling = self.language in _SPELLING_FOLDED
        self.folds_derivation = derivation and self.stems and self.language in _DERIVED
        stemming = "stem" if self.stems else "nostem"
        stopwords = "stop" if self.stopwords else "nostop"
        spelling = ":fold" if self.folds_spelling else ""
        derived = ":derive" if self.folds_derivation else ""
        self.config = (
            f"tok{TOKENIZER_VERSION}:{self.language}:{stemming}:{stopwords}{spelling}{derived}"
        )
        """Everything that changes the terms: part of cache keys."""
        self._term_memo: dict[str, str] = {}
        """word -> its term (``""``: a stopword), up to :data:`TERM_MEMO_WORDS` words: folding
        and stemming a word costs more than looking it up, and a corpus repeats its words."""
        self._ids: dict[str, int] = {}
        """term -> id (from 1); shared with ``share_ids_with``."""
        self._ids_lock: threading.Lock = threading.Lock()
        """Guards numbering new terms."""
        if share_ids_with is not None:
            self._ids, self._ids_lock = share_ids_with._ids, share_ids_with._ids_lock
        self._memo: dict[str, int] = {}
        """word -> term id; 0 for a stopword. CJK runs are not remembered."""

    @property
    def vocabulary_size(self) -> int:
        return len(self._ids)

    def term_id(self, term: str) -> int | None:
        """The id of a term some passage has, or None when no passage has it."""
        return self._ids.get(term)

    def document_terms(self, text: str) -> list[str]:
        """Terms of a passage, in order, repeats kept (term frequency matters)."""
        return self._analyse(text, cjk_unigrams=True)

    def query_terms(self, text: str, *, also_stopwords: frozenset[str] = frozenset()) -> list[str]:
        """Terms of a query, in order, repeats kept (a repeated word weighs more).

        ``also_stopwords`` (folded as :attr:`stopwords` are) are dropped too: another
        language's function words, when the query may be written in that language."""
        return self._analyse(text, cjk_unigrams=False, also_stopwords=also_stopwords)

    def word_terms(self, words: Sequence[str]) -> list[str]:
        """The term of each word :func:`words_of` gave (``""`` for a stopword), all in one
        stemmer call: what :meth:`query_terms` makes of each word alone, without analysing
        each one afresh. CJK runs are not words here (:func:`cjk_terms` splits them)."""
        return self._terms_of(list(words))

    def document_term_ids(self, text: str) -> list[int]:
        """Ids of :meth:`document_terms`, numbering new terms."""
        (ids,) = self.documents_term_ids([text])
        return ids

    def documents_term_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """:meth:`document_term_ids` of many passages at once: the fast path for indexing."""
        normalised = [_normalise(text) for text in texts]
        word_lists = [_words(text, cjk) for text, cjk in normalised]
        memo = self._memo
        if len(memo) > _MEMO_LIMIT:
            memo = self._memo = {}  # a fresh dict: threads reading the old one are unaffected
        new = set().union(*word_lists).difference(memo)
        if any(cjk for _, cjk in normalised):
            new = {word for word in new if not _CJK_RE.match(word)}
        self._remember(memo, new)
        return [
            self._cjk_ids(memo, words) if cjk else list(filter(None, map(memo.__getitem__, words)))
            for words, (_, cjk) in zip(word_lists, normalised, strict=True)
        ]

    def _cjk_ids(self, memo: dict[str, int], words: list[str]) -> list[int]:
        ids: list[int] = []
        for word in words:
            term_id = memo.get(word)
            if term_id is None:
                ids.extend(self._ids_of(cjk_terms(word, unigrams=True)))
            elif term_id:
                ids.append(term_id)
        return ids

    def _analyse(
        self, text: str, *, cjk_unigrams: bool, also_stopwords: frozenset[str] = frozenset()
    ) -> list[str]:
        text, has_cjk = _normalise(text)
        words = _words(text, has_cjk)
        if also_stopwords:
            words = [word for word in words if fold_accents(word) not in also_stopwords]
        plain = list({w for w in words if not (has_cjk and _CJK_RE.match(w))})
        term_of = dict(zip(plain, self._terms_of(plain), strict=True))
        terms: list[str] = []
        for word in words:
            term = term_of.get(word)
            if term is None:
                terms.extend(cjk_terms(word, unigrams=cjk_unigrams))
            elif term:
                terms.append(term)
        return terms

    def _terms_of(self, words: list[str]) -> list[str]:
        """Fold, drop stopwords (as ``""``) and stem non-CJK words, each word once a while
        (:attr:`_term_memo`)."""
        memo = self._term_memo
        found = list(map(memo.get, words))  # a look-up per word, none in Python's loop
        if None not in found:
            return cast(list[str], found)
        missing = list(
            dict.fromkeys(w for w, term in zip(words, found, strict=True) if term is None)
        )
        new = dict(zip(missing, self._fold_and_stem(missing), strict=True))
        if len(memo) + len(new) > TERM_MEMO_WORDS:
            memo.clear()  # another thread may be reading it: ``new`` is this call's own
        memo.update(new)
        return [new[w] if term is None else term for w, term in zip(words, found, strict=True)]

    def _fold_and_stem(self, words: list[str]) -> list[str]:
        folded = [fold_accents(word) for word in words]
        if self.folds_spelling:
            folded = [fold_spelling(word) for word in folded]
        kept = [word for word in folded if word not in self.stopwords]
        if self._stemmer is not None:
            with self._lock:
                stemmed = self._stemmer.stemWords(kept)
            if self.folds_derivation:
                ends = _DERIVATION_ENDS
                stemmed = [fold_derivation(s) if s[-1:] in ends else s for s in stemmed]
            stems = dict(zip(kept, stemmed, strict=True))
        else:
            stems = dict(zip(kept, kept, strict=True))
        return [stems.get(word, "") for word in folded]

    def _remember(self, memo: dict[str, int], words: set[str]) -> None:
        if words:
            originals = list(words)
            memo.update(zip(originals, self._ids_of(self._terms_of(originals)), strict=True))

    def _ids_of(self, terms: list[str]) -> list[int]:
        """Ids of terms, numbering new ones; ``""`` (a stopword) is 0."""
        ids = self._ids
        if not ids.keys() >= set(terms) - {""}:
            with self._ids_lock:
                new = [term for term in dict.fromkeys(terms) if term and term not in ids]
                ids.update(zip(new, range(len(ids) + 1, len(ids) + 1 + len(new)), strict=True))
        return [ids.get(term, 0) for term in terms]


def _words(text: str, has_cjk: bool) -> list[str]:
    """Words (and CJK runs, when ``has_cjk``) of normalised text, in order."""
    if has_cjk:
        return _MIXED_RE.findall(text)
    if text.isascii():
        return text.translate(_ASCII_NON_WORD).split()
    return _WORD_RE.findall(text)


def _normalise(text: str) -> tuple[str, bool]:
    """NFKC and casefolded text, and whether it has CJK characters.

    Chinese and Japanese do not put spaces between words, so whitespace and
    ``<br>`` between two Han or kana characters are dropped: vertical text
    comes out of PDFs one character per line (or per table-cell line), and
    its bigrams would otherwise never form.
    """
    text = unicodedata.normalize("NFKC", text).casefold()
    has_cjk = not text.isascii() and _CJK_RE.search(text) is not None
    if has_cjk:
        text = _HAN_KANA_GAP_RE.sub("", text)
    return text, has_cjk


def words_of(text: str) -> list[str]:
    """The words and CJK runs of ``text``, normalised (NFKC, casefolded), in order."""
    return words_and_cjk(text)[0]


def words_and_cjk(text: str) -> tuple[list[str], bool]:
    """:func:`words_of`, and whether any of them is a CJK run (:func:`is_cjk_run`): when none
    is, a caller need not ask of each word."""
    normalised, has_cjk = _normalise(text)
    return _words(normalised, has_cjk), has_cjk


def is_cjk_run(word: str) -> bool:
    """True for a run of Han, Kana or Hangul characters, which is split into bigrams."""
    return not word.isascii() and _CJK_RE.match(word) is not None
