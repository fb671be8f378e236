from __future__ import annotations

from collections import Counter

from extract.fidelity import Fidelity, compare, markdown_words, strip_markup, words


def test_words_are_nfkc_casefolded_and_split_at_punctuation_and_underscores() -> None:
    assert words("The ﬁle fz_new_context: FILE.") == Counter(
        {"the": 1, "file": 2, "fz": 1, "new": 1, "context": 1}
    )


def test_a_word_hyphenated_at_a_line_end_is_one_word() -> None:
    assert words("perfor-\nmance and self-contained") == Counter(
        {"performance": 1, "and": 1, "self": 1, "contained": 1}
    )


def test_every_cjk_character_is_a_word_and_latin_runs_stay_whole() -> None:
    assert words("道路交通法 ABC한국") == Counter(
        {"道": 1, "路": 1, "交": 1, "通": 1, "法": 1, "abc": 1, "한": 1, "국": 1}
    )


def test_markup_the_extractor_adds_is_not_words() -> None:
    markdown = (
        "<!-- page 3 -->\n\n# **Title**\n\n|a<br>b|~~`c`~~|\n|---|---|\n"
        "[link text](https://example.org/x) ![](figure.png) &amp; x\\*y"
    )

    assert strip_markup(markdown).split() == [
        "#", "**Title**", "|a", "b|~~`c`~~|", "|---|---|", "[link", "text]", "&", "x*y",
    ]  # fmt: skip
    assert markdown_words(markdown) == Counter(
        {"title": 1, "a": 1, "b": 1, "c": 1, "link": 1, "text": 1, "x": 1, "y": 1}
    )


def test_tag_like_text_of_the_document_itself_is_kept() -> None:
    assert markdown_words('`<div id="part1">`') == Counter({"div": 1, "id": 1, "part1": 1})


def test_recall_counts_words_kept_and_precision_words_not_invented() -> None:
    reference = words("allocate context containing global state")
    glued = markdown_words("allocatecontext containing global state extra")

    fidelity = compare(reference, glued)

    assert fidelity == Fidelity(reference=5, extracted=5, matched=3)
    assert (fidelity.recall, fidelity.precision) == (0.6, 0.6)
    assert Fidelity.total([fidelity, Fidelity(5, 5, 5)]) == Fidelity(10, 10, 8)
    assert Fidelity(0, 0, 0).recall == Fidelity(0, 0, 0).precision == 1.0
