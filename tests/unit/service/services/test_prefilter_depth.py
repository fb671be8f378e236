"""How deep a prefiltered search reads each query term's postings (#28)."""

from __future__ import annotations

from service.services import prefilter


def test_a_terms_depth_is_the_setting_or_a_share_of_the_project_whichever_is_more() -> None:
    assert prefilter.term_depth(2000, 100_000) == 2000
    assert prefilter.term_depth(2000, 1_000_000) == int(1_000_000 * prefilter.DEPTH_SHARE)
    assert prefilter.term_depth(0, 1_000_000) == 0, "0 reads every posting, however large"
