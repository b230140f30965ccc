"""Paired statistics on inputs whose answers are known."""

import pytest

from routesim_evolve.score.stats import (
    bootstrap_mean_ci,
    compare_paired,
    headroom_interval,
    wilcoxon_p,
)


def test_wilcoxon_matches_the_textbook_example():
    # Darwin's Zea mays differences, the example of scipy's documentation:
    # W = 24, exact two-sided p = 0.041259765625.
    d = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]
    assert wilcoxon_p(d) == pytest.approx(0.041259765625)


def test_wilcoxon_exact_small_case():
    # Three positive differences: only 1 of the 8 sign patterns is as
    # extreme on each side, so p = 2/8.
    assert wilcoxon_p([1, 2, 3]) == pytest.approx(0.25)


def test_wilcoxon_all_ties_is_one():
    assert wilcoxon_p([0, 0, 0]) == 1.0


def test_bootstrap_of_constant_differences_is_a_point():
    assert bootstrap_mean_ci([0.2] * 10) == pytest.approx((0.2, 0.2, 0.2))


def test_bootstrap_interval_covers_the_mean_and_narrows_with_n():
    small = bootstrap_mean_ci([-1, 1] * 5, seed=1)
    large = bootstrap_mean_ci([-1, 1] * 500, seed=1)
    assert small[1] < 0 < small[2]
    assert large[2] - large[1] < (small[2] - small[1]) / 5


def test_compare_paired_counts_and_direction():
    cmp = compare_paired("new", "lnd", [0.9, 0.8, 0.7, 0.9], [0.5, 0.8, 0.6, 0.4])
    assert (cmp.wins, cmp.losses, cmp.ties) == (3, 0, 1)
    assert cmp.mean_diff == pytest.approx(0.25)
    assert cmp.significant and cmp.ci_low > 0


def test_compare_paired_refuses_unpaired_lists():
    with pytest.raises(ValueError, match="not paired"):
        compare_paired("a", "b", [1.0, 2.0], [1.0])


def test_headroom_interval_of_a_constant_share_is_that_share():
    # Every scenario: lnd 0.5, oracle 0.9, mine 0.7 — half the gap, whatever is drawn.
    n = 6
    low, high = headroom_interval([0.7] * n, [[0.5] * n], [0.9] * n, [f"s{i}" for i in range(n)])
    assert (low, high) == pytest.approx((0.5, 0.5))


def test_headroom_interval_takes_the_better_lnd_in_each_resample():
    # The second lnd router is better everywhere: the share is against it.
    n = 5
    low, high = headroom_interval(
        [0.8] * n, [[0.5] * n, [0.6] * n], [1.0] * n, [f"s{i}" for i in range(n)])
    assert (low, high) == pytest.approx((0.5, 0.5))


def test_headroom_interval_resamples_scenarios_not_copies():
    # Two scenarios, one where mine closes the whole gap and one where it
    # closes none, each with ten reseeded copies that agree with it. The
    # copies add no independent draws: clustered, the interval spans what
    # two scenarios allow; taken one by one it would look far surer.
    mine = [0.9] * 10 + [0.5] * 10 + [0.9] * 10 + [0.5] * 10
    lnd = [[0.5] * 40]
    ceiling = [0.9] * 40
    names = ["a"] * 10 + ["b"] * 10 + ["c"] * 10 + ["d"] * 10
    clustered = headroom_interval(mine, lnd, ceiling, names, seed=3)
    one_by_one = headroom_interval(mine, lnd, ceiling, [str(i) for i in range(40)], seed=3)
    assert clustered is not None and one_by_one is not None
    assert clustered[0] <= 0.25 and clustered[1] >= 0.75
    assert one_by_one[1] - one_by_one[0] < (clustered[1] - clustered[0]) / 2


def test_headroom_interval_needs_two_scenarios_and_a_gap():
    assert headroom_interval([0.7, 0.8], [[0.5, 0.5]], [0.9, 0.9], ["a", "a"]) is None
    # The oracle no better than lnd anywhere: no share to bound.
    assert headroom_interval([0.7, 0.8], [[0.9, 0.9]], [0.9, 0.9], ["a", "b"]) is None
    with pytest.raises(ValueError, match="one score per sample"):
        headroom_interval([0.7], [[0.5, 0.5]], [0.9, 0.9], ["a", "b"])


def test_compare_paired_by_clusters_counts_scenarios_once():
    # Four scenarios, each with ten copies that agree with it: as 40 samples
    # the wins look overwhelming, as the four scenarios they are not.
    a = [0.6] * 10 + [0.6] * 10 + [0.6] * 10 + [0.4] * 10
    b = [0.5] * 40
    names = [s for s in "wxyz" for _ in range(10)]
    flat = compare_paired("a", "b", a, b)
    clustered = compare_paired("a", "b", a, b, clusters=names)
    assert (flat.n, flat.clusters, clustered.n, clustered.clusters) == (40, 40, 40, 4)
    assert flat.mean_diff == pytest.approx(clustered.mean_diff) == pytest.approx(0.05)
    assert flat.significant and not clustered.significant
    assert flat.p_value < 0.01 < 0.5 < clustered.p_value
