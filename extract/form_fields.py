"""The values of a PDF form's filled fields that its pages do not show, once each.

A filled field usually shows its value on the page (its appearance stream is part of
the text layer: "Alice" in a name field), and those values are in the text already.
A radio button's or check box's value is the name of its "on" state, not text a reader
sees: ``Yes``, or the label printed beside the button (``cms-etc-filled.pdf``: "The
provider or supplier is unable to file a claim…"), sometimes with more words the page
does not print; adding it would say the label twice and invent the rest, so buttons are
left out. What a page does not show is a choice scrolled out of its list box
(``widgettest.pdf``'s "Potsdam") or text beyond a field's box: :func:`unshown_values`
gives, per page, the values of text and choice fields (a choice's displayed name for its
export value) whose words are not all in the page's text layer; the extractor appends
them to the page, once each.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from extract.fidelity import join_hyphenated, words

__all__ = ["FormField", "page_form_values", "unshown_values"]

_VALUE_FIELDS = frozenset({"Text", "ComboBox", "ListBox"})
"""Field types whose value is text a reader sees (PyMuPDF's ``field_type_string``)."""


class FormField(Protocol):
    """What :func:`unshown_values` reads of a form field (PyMuPDF's ``Widget``)."""

    field_type_string: str
    field_value: Any
    choice_values: Any


def _shown_value(field: FormField) -> str:
    """The value as a reader would see it (a choice's display name); "" for a button."""
    if field.field_type_string not in _VALUE_FIELDS:
        return ""
    value = field.field_value
    if isinstance(value, list | tuple):
        value = "\n".join(str(item) for item in value)
    value = str(value or "").strip()
    for choice in field.choice_values or ():
        pair = isinstance(choice, Sequence) and not isinstance(choice, str) and len(choice) == 2
        if pair and str(choice[0]) == value:
            return str(choice[1]).strip()
    return value


def unshown_values(fields: Iterable[FormField], layer: str) -> list[str]:
    """The filled values of ``fields`` whose words are not all in ``layer`` (the page's text),
    each once, in field order; whitespace inside a value collapsed."""
    shown = words(layer)
    values: list[str] = []
    for field in fields:
        value = _shown_value(field)
        own = words(value)
        if not own or not own - shown:
            continue
        values.append(" ".join(join_hyphenated(value).split()))
        shown += own
    return values


def page_form_values(page: Any, layer: str) -> list[str]:
    """:func:`unshown_values` of a PyMuPDF page's widgets (none on a page without any)."""
    try:
        fields: list[FormField] = list(page.widgets())
    except Exception:
        return []  # a damaged form dictionary: the page's text is still read
    return unshown_values(fields, layer) if fields else []
