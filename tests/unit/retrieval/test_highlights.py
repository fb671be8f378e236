from __future__ import annotations

from retrieval.highlights import MAX_MARKED_WORDS, matched_words
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
