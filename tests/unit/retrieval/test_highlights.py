from __future__ import annotations

from collections.abc import Sequence

from retrieval.highlights import MAX_MARKED_WORDS, WordMarker, matched_words
from retrieval.tokenize import Tokenizer


def marked(query: str, text: str, language: str = "english") -> tuple[str, ...]:
    tokenizer = Tokenizer(language)
    return matched_words(tokenizer, text, tokenizer.query_terms(query))


def test_inflections_the_stemmer_matched_are_marked_and_stopwords_are_not() -> None:
    text = "The Tracing of traces: what the tracer traced is in the log."
    assert marked("how is the tracing of a trace done", text) == ("tracing", "traces", "traced")


def test_accents_and_case_fold_as_bm25_folds_them() -> None:
    assert marked("cafe", "Un Café au lait, un CAFE noir.") == ("café", "cafe")


def test_cjk_marks_the_bigrams_the_query_asked_for() -> None:
    assert marked("机器学习", "深度机器学习模型") == ("机器", "器学", "学习")
    assert marked("猫", "我的猫很可爱") == ("猫",)


def test_no_query_term_marks_nothing() -> None:
    assert marked("the of and", "The cat and the hat.") == ()


def test_the_list_is_bounded() -> None:
    words = [f"word{index}" for index in range(MAX_MARKED_WORDS * 2)]
    assert len(marked(" ".join(words), " ".join(words))) == MAX_MARKED_WORDS


class _CountingTokenizer(Tokenizer):
    """Counts the words it is asked to analyse one by one."""

    def __init__(self) -> None:
        super().__init__("english")
        self.analysed: list[str] = []

    def word_terms(self, words: Sequence[str]) -> list[str]:
        self.analysed.extend(words)
        return super().word_terms(words)


def test_a_search_analyses_each_distinct_word_once_over_its_passages() -> None:
    tokenizer = _CountingTokenizer()
    marker = WordMarker(tokenizer, tokenizer.query_terms("traces of cats"))
    first = marker("The tracing of traces, and cats.")
    second = marker("Cats leave traces; the tracing goes on.")
    assert first == marked("traces of cats", "The tracing of traces, and cats.")
    assert second == ("cats", "traces", "tracing")
    assert sorted(tokenizer.analysed) == sorted(set(tokenizer.analysed))
    assert set(tokenizer.analysed) == {
        "the",
        "tracing",
        "of",
        "traces",
        "and",
        "cats",
        "leave",
        "goes",
        "on",
    }
