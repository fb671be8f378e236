"""How deep a prefiltered search reads each query term's postings (#28)."""

from __future__ import annotations

from service.services import prefilter


def test_a_terms_depth_is_the_setting_or_a_share_of_the_project_whichever_is_more() -> None:
    assert prefilter.term_depth(2000, 100_000) == 2000
    assert prefilter.term_depth(2000, 1_000_000) == int(1_000_000 * prefilter.DEPTH_SHARE)
    assert prefilter.term_depth(0, 1_000_000) == 0, "0 reads every posting, however large"


def test_a_deep_term_reads_postings_in_proportion_to_its_weight() -> None:
    weights = [8.0, 4.0, 0.1, 2.5, 6.0]
    frequencies = [50_000, 20_000, 90_000, 10_000, 300]
    depths = prefilter.term_depths(weights, frequencies, 10_000)
    assert depths[0] == 10_000, "the heaviest deep term reads the whole depth"
    assert depths[1] == 5_000, "half as heavy, half as deep"
    assert depths[2] == 10_000 * prefilter.LIGHTEST_DEPTH_SHARE, "never below the least share"
    assert depths[3:] == [None, None], "a term in at most the depth's passages is read whole"
    assert prefilter.term_depths([6.0, 1.0], [1_999, 2_001], 2_000) == [None, 2_000]


def test_only_the_heaviest_deep_terms_are_read_the_others_only_probed() -> None:
    count = prefilter.MAX_READ_TERMS + 5
    weights = [float(count - i) for i in range(count)]  # heaviest first
    depths = prefilter.term_depths([*weights, 100.0], [5_000] * count + [10], 1_000)
    read = [depth for depth in depths[:count] if depth]
    assert len(read) == prefilter.MAX_READ_TERMS, "one bit of the read mask each"
    assert depths[prefilter.MAX_READ_TERMS : count] == [0] * 5, "the lightest deep terms"
    assert depths[-1] is None, "a shallow term is read whole, whatever the count"
