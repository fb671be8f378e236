"""Filled form fields' values are in a page's text once: shown ones are not added again."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from extract.form_fields import unshown_values


@dataclass
class Field:
    """A form field as PyMuPDF's ``Widget`` describes one."""

    field_type_string: str
    field_value: Any
    choice_values: Any = None


LAYER = "Name:\nAlice\nCountry:\nFrankfurt\nHamburg\nI agree to the terms\n"


def test_a_value_the_page_shows_is_not_added_again() -> None:
    assert unshown_values([Field("Text", "Alice"), Field("ComboBox", "Hamburg")], LAYER) == []


def test_a_choice_scrolled_out_of_its_list_box_is_added_once() -> None:
    fields = [Field("ListBox", "Potsdam", ["Frankfurt", "Hamburg", "Potsdam"])] * 2

    assert unshown_values(fields, LAYER) == ["Potsdam"]


def test_a_choice_reads_as_its_display_name_not_its_export_value() -> None:
    fields = [Field("ComboBox", "de", [("fr", "France"), ("de", "Germany")])]

    assert unshown_values(fields, LAYER) == ["Germany"]


def test_buttons_say_their_state_by_the_label_beside_them_and_are_not_added() -> None:
    fields = [
        Field("CheckBox", "Yes"),
        Field("RadioButton", "I agree to the terms. Note: see page 12 for the addresses"),
    ]

    assert unshown_values(fields, LAYER) == []


def test_a_multi_line_value_is_one_paragraph_with_its_hyphenation_joined() -> None:
    fields = [Field("Text", "Sent\n\tby multi-\n\tline post")]

    assert unshown_values(fields, LAYER) == ["Sent by multiline post"]
