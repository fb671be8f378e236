"""Finding a passage's words among a page's word boxes (extract.locate)."""

from __future__ import annotations

from extract.locate import Box, WordBox, locate, merge_lines, passage_words


def _line(words: str, y: float, x: float = 72.0) -> list[WordBox]:
    boxes = []
    for word in words.split():
        boxes.append(WordBox(x, y, x + 6 * len(word), y + 10, word))
        x += 6 * len(word) + 4
    return boxes


PASSAGE = (
    "The survey team measured glacier retreat at forty stations along the fjord, finding "
    "that the calving front moved back by nine hundred metres in one season."
)


def _marked(located: object, words: list[WordBox]) -> set[str]:
    return {words[index].text for index in located.words}  # type: ignore[attr-defined]


def test_hyphenation_and_ligatures_on_the_page_do_not_hide_the_passage() -> None:
    words = (
        _line("The survey team measured glacier re-", 100)
        + _line("treat at forty stations along the fjord, ﬁnding that the calv-", 112)
        + _line("ing front moved back by nine hundred metres in one season.", 124)
    )
    located = locate(PASSAGE, words)
    assert located.covered == 1.0
    assert len(located.words) == len(words)
    assert len(located.lines) == 3  # one mark per line, not per word


def test_markdown_markup_is_not_looked_for() -> None:
    words = _line("Results by station: Fjord North 12.5 metres, Fjord South 9.1 metres", 100)
    located = locate(
        "**Results** by _station_:<br>| Fjord North | 12.5 metres |\n| Fjord South | 9.1 metres |",
        words,
    )
    assert located.covered == 1.0


def test_a_passage_in_another_reading_order_is_found_in_both_places() -> None:
    second, first = PASSAGE.split(", finding ")
    words = _line(first, 100, x=320) + _line(second + ",", 300, x=72)
    located = locate(PASSAGE, words)
    assert located.covered >= 0.95
    assert {box.y0 for box in located.lines} == {100.0, 300.0}


def test_a_common_phrase_elsewhere_on_the_page_is_not_marked() -> None:
    other = _line("In one season of the year the team moved to another survey", 500)
    words = _line(PASSAGE, 100) + other
    located = locate(PASSAGE, words)
    assert located.covered == 1.0
    assert not any(index >= len(words) - len(other) for index in located.words)


def test_text_without_spaces_is_found() -> None:
    page = [
        WordBox(72, 100, 300, 112, "東京大学の研究チームは、氷河の後退を"),
        WordBox(72, 114, 300, 126, "四十か所で測定した。"),
        WordBox(72, 300, 300, 312, "別の段落です。"),
    ]
    located = locate("東京大学の研究チームは、氷河の後退を四十か所で測定した。", page)
    assert located.covered == 1.0
    assert located.words == (0, 1)


def test_a_passage_not_on_the_page_is_not_found() -> None:
    located = locate(PASSAGE, _line("Nothing here is about ice or water at all today", 100))
    assert not located.found
    assert located.covered == 0.0
    assert located.bounds() is None
    assert locate(PASSAGE, []).covered == 0.0


def test_passage_words_leave_markup_out() -> None:
    assert passage_words("## Tides <br> [the chart](https://x.example/c.pdf) **high** |") == [
        "tides",
        "the",
        "chart",
        "high",
    ]


def test_boxes_on_one_line_merge_and_lines_apart_do_not() -> None:
    merged = merge_lines([Box(0, 0, 10, 10), Box(12, 0, 20, 10), Box(0, 20, 10, 30)])
    assert merged == [Box(0, 0, 20, 10), Box(0, 20, 10, 30)]


def test_a_table_the_file_wrote_column_by_column_is_found_row_by_row() -> None:
    cells = [["07/01/2015", "Maxim Integrated", "San Jose", "20"],
             ["07/06/2015", "ProCourier Inc.", "San Diego", "22"],
             ["07/09/2015", "Pyramid Alehouse", "Berkeley", "63"]]  # fmt: skip
    words = []
    for column, x in enumerate((72, 160, 300, 400)):  # written column by column
        for row, y in enumerate((100, 112, 124)):
            words += _line(cells[row][column], y, x=x)
    table = "\n".join("|" + "|".join(row) + "|" for row in cells)
    located = locate(table, words)
    assert located.covered >= 0.9
    assert len(located.words) == len(words)


def test_a_shared_phrase_far_from_the_passage_is_not_marked() -> None:
    passage = PASSAGE + " Meltwater lakes formed on the surface each summer and drained away."
    far = _line("Elsewhere the rangers noted that the calving front moved back quickly", 700)
    words = _line(passage, 100) + _line("filler " * 40, 300) + far
    located = locate(passage, words)
    assert located.covered == 1.0
    assert all(words[index].y0 < 700 for index in located.words)


def test_words_of_the_passage_inside_its_region_are_taken_whatever_their_order() -> None:
    heading = "Monthly ice loss measured at the northern stations of the glacier survey"
    cells = ["north", "1990", "12.5", "south", "2000", "9.1", "east", "2010", "7.4"]
    words = _line(heading, 100)
    for position, cell in enumerate(reversed(cells)):  # in no order either reading recovers
        words += _line(cell, 120 + 12 * (position % 3), x=90 + 60 * (position // 3))
    words += _line("north 1990 elsewhere on the page", 600)
    passage = heading + "\n\n|" + "|".join(cells[:3]) + "|\n|" + "|".join(cells[3:6]) + "|\n|"
    passage += "|".join(cells[6:]) + "|"
    located = locate(passage, words)
    assert located.covered == 1.0
    assert all(words[index].y0 < 600 for index in located.words)
