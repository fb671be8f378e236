"""`shortlist upload`'s progress: the bar only moves forward, even when a part is sent
again, and the pages extracted so far are printed while it waits."""

from __future__ import annotations

import pytest

from service.cli.commands import forward_only, show_pages


def test_bytes_taken_back_for_a_resent_part_show_only_once_they_are_sent_again() -> None:
    steps: list[int] = []
    report = forward_only(steps.append)

    for count in (100, 50, -50, 30, 30, 40):
        report(count)

    assert steps == [100, 50, 10, 40]
    assert sum(steps) == 200


def test_waiting_for_extraction_prints_each_new_page_count_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    report = show_pages("manual.pdf")

    for progress in (None, (16, 400), (16, 400), (32, 400)):
        status = "processing" if progress else "pending"
        shown = {"pages_done": progress[0], "page_count": progress[1]} if progress else None
        report({"status": status, "progress": shown})

    assert capsys.readouterr().err.splitlines() == [
        "manual.pdf: page 16 of 400 extracted",
        "manual.pdf: page 32 of 400 extracted",
    ]
