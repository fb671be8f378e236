"""`shortlist upload`'s progress bar only moves forward, even when a part is sent again."""

from __future__ import annotations

from service.cli.commands import forward_only


def test_bytes_taken_back_for_a_resent_part_show_only_once_they_are_sent_again() -> None:
    steps: list[int] = []
    report = forward_only(steps.append)

    for count in (100, 50, -50, 30, 30, 40):
        report(count)

    assert steps == [100, 50, 10, 40]
    assert sum(steps) == 200
