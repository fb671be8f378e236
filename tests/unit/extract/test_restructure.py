from __future__ import annotations

from extract.restructure import with_layout_structure


def test_layout_headings_mark_the_text_layers_paragraphs() -> None:
    layout = "# **5.2 Creation**\n\nsome other words\n\n## _6. Implementation_\n\nmore"
    paragraphs = ["5.2 Creation", "To create a context...", "6.", "Implementation", "Text."]

    page = with_layout_structure(layout, paragraphs, "\n".join(paragraphs))

    assert page.split("\n\n") == [
        "# 5.2 Creation", "To create a context...", "## 6. Implementation", "Text.",
    ]  # fmt: skip


def test_a_heading_that_opens_a_paragraph_is_cut_from_it() -> None:
    page = with_layout_structure(
        "# Scope", ["Scope This section covers the rest."], "Scope This section covers the rest."
    )

    assert page == "# Scope\n\nThis section covers the rest."


def test_a_faithful_layout_table_replaces_the_paragraphs_it_covers() -> None:
    table = "|Region|Revenue|\n|---|---|\n|North|120|"
    paragraphs = ["Sales by region:", "Region Revenue", "North 120", "Footnote."]

    page = with_layout_structure(table, paragraphs, "\n".join(paragraphs))

    assert page.split("\n\n") == ["Sales by region:", table, "Footnote."]


def test_a_table_that_invents_words_is_left_out() -> None:
    table = "|Reg|ion|\n|---|---|\n|Nor|th|"
    paragraphs = ["Region", "North"]

    assert with_layout_structure(table, paragraphs, "Region\nNorth") == "Region\n\nNorth"


def test_a_table_merged_with_the_prose_beside_it_is_kept_without_the_prose_column() -> None:
    # tracemonkey.pdf p. 8: the layout model read a column of running text as the first
    # column of Figure 9's table, cutting its paragraph.
    prose = "Because traces are in SSA form, certain optimizations are easy to implement."
    table = (
        "|**5.1**<br>**Optimizations**|Tag|JS Type|\n|---|---|---|\n"
        "|Because traces are in<br>SSA form,|xx1<br>000|number<br>object|"
    )
    paragraphs = ["5.1 Optimizations", prose, "Tag JS Type xx1 number 000 object", "Figure 9."]

    page = with_layout_structure(table, paragraphs, "\n".join(paragraphs))

    assert page.split("\n\n") == [
        "5.1 Optimizations", prose, "|Tag|JS Type|\n|---|---|\n|xx1<br>000|number<br>object|",
        "Figure 9.",
    ]  # fmt: skip
