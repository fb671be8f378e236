from __future__ import annotations

from extract.fidelity import compare, markdown_words, words
from extract.reconcile import reconcile, respace, without_strikethrough

CODE_LAYER = (
    "To create a context, use fz new context:\n/*\n"
    "fz_new_context: Allocate context containing global state.\n"
    "images. FZ_STORE_UNLIMITED can be used if a hard limit is not\n"
)
CODE_LAYOUT = (
    "To create a context, use `fz` ~~`n`~~ `ew` ~~`c`~~ `ontext` :\n\n"
    "```\n/*\n```\n\n```\nfz_new_context:Allocatecontextcontainingglobalstate.\n"
    "images.FZ_STORE_UNLIMITEDcanbeusedifahardlimitisnot\n```\n"
)


def test_glued_code_and_split_identifiers_take_the_text_layers_word_breaks() -> None:
    repaired = respace(without_strikethrough(CODE_LAYOUT), CODE_LAYER)

    assert "fz_new_context: Allocate context containing global state." in repaired
    assert "FZ_STORE_UNLIMITED can be used if a hard limit is not" in repaired
    assert "use `fz` new context :" in repaired
    assert repaired.count("```") == 4  # the code blocks stay code blocks
    assert "~~" not in repaired


def test_reconcile_reports_a_repaired_page_with_its_fidelity() -> None:
    checked = reconcile(CODE_LAYOUT, CODE_LAYER)

    assert checked.verdict == "repaired"
    assert checked.fidelity == compare(words(CODE_LAYER), markdown_words(checked.markdown))
    assert checked.fidelity.recall == checked.fidelity.precision == 1.0


def test_other_letters_are_not_re_spaced() -> None:
    layer = "the quick brown fox"

    assert respace("the quikc brownfox", layer) == "the quikc brown fox"


def test_a_page_that_agrees_with_its_text_layer_is_kept_unchanged() -> None:
    markdown = "# Results\n\n|Region|Revenue|\n|---|---|\n|North|120|\n"

    checked = reconcile(markdown, "Results\nRegion Revenue\nNorth 120\n")

    assert checked == (markdown, "kept", checked.fidelity)
    assert checked.fidelity.recall == 1.0


def test_lines_the_layout_skipped_are_appended_from_the_text_layer() -> None:
    layer = "Body text of the page.\nVerDate Sep 11 2014 Jkt 250001\n"

    checked = reconcile("Body text of the page.", layer)

    assert checked.markdown == "Body text of the page.\n\nVerDate Sep 11 2014 Jkt 250001"
    assert checked.verdict == "repaired"


def test_a_page_that_invents_words_is_given_up_for_its_plain_rendering() -> None:
    layer = " ".join(f"word{n}" for n in range(40))
    duplicated = layer + "\n\n" + " ".join(f"figure{n}" for n in range(10))

    checked = reconcile(duplicated, layer)

    assert checked.verdict == "plain"
    assert checked.fidelity.recall == 1.0 and checked.fidelity.precision < 0.95
