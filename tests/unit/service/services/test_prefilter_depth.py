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


def test_a_deep_term_read_all_but_whole_is_read_whole() -> None:
    """Where reading a deep term whole at most doubles its read and adds no more than
    :data:`~prefilter.WHOLE_READ_PROBES` postings per candidate rescored, it is read whole:
    cheaper than probing it for each candidate, and exact."""
    weights, allowance = [8.0, 4.0], prefilter.WHOLE_READ_PROBES * 100
    assert prefilter.term_depths(weights, [10_000 + allowance, 10_500], 10_000, rescore=100) == [
        None,
        5_000,
    ], "the heaviest term has its allowance past the depth; the other, more than its read"
    assert prefilter.term_depths(weights, [10_001 + allowance, 10_500], 10_000, rescore=100) == [
        10_000,
        5_000,
    ]
    assert prefilter.term_depths([8.0], [1_000], 400, rescore=10_000) == [400], (
        "never more than twice its read, however many candidates"
    )
    assert prefilter.term_depths([8.0], [800], 400, rescore=10_000) == [None]
    assert prefilter.term_depths([8.0], [10_001], 10_000) == [10_000], "no rescore, no allowance"
