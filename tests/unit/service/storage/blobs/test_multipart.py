"""The arithmetic of cutting a file into S3 upload parts."""

from __future__ import annotations

import pytest

from service.storage.blobs.multipart import MAX_PARTS, MIN_PART_BYTES, part_size_for, plan_parts

MB = 1024 * 1024


def test_parts_cover_the_file_exactly_with_only_the_last_one_short() -> None:
    parts = plan_parts(20 * MB + 1, 8 * MB)

    assert [(p.number, p.offset, p.size) for p in parts] == [
        (1, 0, 8 * MB),
        (2, 8 * MB, 8 * MB),
        (3, 16 * MB, 4 * MB + 1),
    ]


def test_a_file_of_whole_parts_has_no_empty_tail() -> None:
    parts = plan_parts(16 * MB, 8 * MB)

    assert [p.size for p in parts] == [8 * MB, 8 * MB]


def test_a_small_file_is_one_part() -> None:
    assert plan_parts(10, 8 * MB) == [(1, 0, 10)]


def test_the_part_size_never_goes_below_the_s3_minimum() -> None:
    assert part_size_for(50 * MB, 1 * MB) == MIN_PART_BYTES


def test_the_part_size_grows_to_stay_within_the_s3_part_count() -> None:
    size = MAX_PARTS * 8 * MB + 1

    part_size = part_size_for(size, 8 * MB)

    assert part_size > 8 * MB
    assert len(plan_parts(size, part_size)) == MAX_PARTS


@pytest.mark.parametrize(("size", "part_size"), [(0, 8 * MB), (10, 0)])
def test_an_empty_file_or_part_cannot_be_planned(size: int, part_size: int) -> None:
    with pytest.raises(ValueError, match="Cannot plan"):
        plan_parts(size, part_size)
