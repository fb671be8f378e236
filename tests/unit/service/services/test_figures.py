"""Which figure a search result sits beside (service.services.figures)."""

from __future__ import annotations

from extract.types import Figure
from retrieval.types import Hit
from service.services.figures import figure_beside, loaded, stored

CHART = Figure(
    3, (50.0, 60.0, 300.0, 400.0), "Figure 2: Retreat by station, 1990-2020.", "Figure 2"
)
MAP = Figure(3, (50.0, 420.0, 300.0, 700.0), "Fig. 3. The fjord.", "Figure 3")
ELSEWHERE = Figure(5, (50.0, 60.0, 300.0, 400.0), "Figure 4: Ice cores.", "Figure 4")


def _hit(text: str, pages: tuple[int, int] = (3, 3)) -> Hit:
    return Hit("d:1", "d", "report.pdf", pages, "", text, 1.0, 1.0)


def test_a_result_holding_a_caption_is_beside_that_figure() -> None:
    found = figure_beside(
        _hit("Retreat by station, 1990-2020 — Figure 2: retreat by station"), [CHART, MAP]
    )
    assert found is not None and found.number == 1


def test_a_result_naming_a_figure_on_its_page_is_beside_it() -> None:
    found = figure_beside(_hit("As Fig. 3 shows, the fjord widened."), [CHART, MAP, ELSEWHERE])
    assert found is not None and (found.number, found.figure) == (2, MAP)
    assert figure_beside(_hit("As Figure 4 shows"), [CHART, MAP, ELSEWHERE]) is None  # p. 5
    assert figure_beside(_hit("Figure 23 is elsewhere"), [CHART, MAP]) is None
    assert figure_beside(_hit("No figure here"), [CHART, MAP]) is None


def test_the_stored_form_reads_back() -> None:
    assert loaded(stored([CHART, MAP]).obj) == [CHART, MAP]
