"""Paired statistics on inputs whose answers are known."""

import numpy as np
import pytest

from routesim_evolve.score.stats import (
    bootstrap_mean_ci,
    cluster_means,
    compare_paired,
    delivered_of_feasible,
    headroom_captured,
    headroom_interval,
    minimum_detectable,
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


def _counts(delivered: float, n: int, feasible: float = 10) -> tuple[list[float], list[float]]:
    """One router's (delivered, feasible) on n samples alike."""
    return [delivered] * n, [feasible] * n


def test_headroom_captured_never_exceeds_the_whole_gap():
    assert headroom_captured(0.7, 0.5) == pytest.approx(0.4)
    assert headroom_captured(1.0, 0.5) == pytest.approx(1.0)
    assert headroom_captured(0.4, 0.5) == pytest.approx(-0.2)
    assert headroom_captured(0.9, 1.0) is None  # lnd delivers all that is feasible
    assert delivered_of_feasible(3, 4) == pytest.approx(0.75)
    assert delivered_of_feasible(0, 0) is None


def test_headroom_interval_of_a_constant_share_is_that_share():
    # Every scenario: 10 feasible, lnd delivers 5, mine 7.5 — half the gap.
    n = 6
    low, high = headroom_interval(_counts(7.5, n), [_counts(5, n)], [f"s{i}" for i in range(n)])
    assert (low, high) == pytest.approx((0.5, 0.5))


def test_headroom_interval_takes_the_better_lnd_in_each_resample():
    # The second lnd router is better everywhere: the share is against it.
    n = 5
    low, high = headroom_interval(_counts(8, n), [_counts(5, n), _counts(6, n)],
                                  [f"s{i}" for i in range(n)])
    assert (low, high) == pytest.approx((0.5, 0.5))


def test_headroom_interval_weighs_each_router_in_its_own_world():
    # lnd met fewer feasible payments (its own world): 4 of 5 is 80 %;
    # mine 9 of 10 closes half of the remaining 20 %.
    n = 4
    names = [f"s{i}" for i in range(n)]
    low, high = headroom_interval(_counts(9, n, 10), [_counts(4, n, 5)], names)
    assert (low, high) == pytest.approx((0.5, 0.5))


def test_headroom_interval_resamples_scenarios_not_copies():
    # Two kinds of scenario, one where mine closes the whole gap and one
    # where it closes none, each with ten reseeded copies that agree with
    # it. The copies add no independent draws: clustered, the interval spans
    # what four scenarios allow; taken one by one it would look far surer.
    mine = ([10.0] * 10 + [5.0] * 10) * 2, [10.0] * 40
    lnd = [([5.0] * 40, [10.0] * 40)]
    names = ["a"] * 10 + ["b"] * 10 + ["c"] * 10 + ["d"] * 10
    clustered = headroom_interval(mine, lnd, names, seed=3)
    one_by_one = headroom_interval(mine, lnd, [str(i) for i in range(40)], seed=3)
    assert clustered is not None and one_by_one is not None
    assert clustered[0] <= 0.25 and clustered[1] >= 0.75
    assert one_by_one[1] - one_by_one[0] < (clustered[1] - clustered[0]) / 2


def test_headroom_interval_needs_two_scenarios_and_a_gap():
    assert headroom_interval(([7, 8], [10, 10]), [([5, 5], [10, 10])], ["a", "a"]) is None
    # lnd delivers all that is feasible everywhere: no share to bound.
    assert headroom_interval(([7, 8], [10, 10]), [([10, 10], [10, 10])], ["a", "b"]) is None
    with pytest.raises(ValueError, match="one count per sample"):
        headroom_interval(([7], [10]), [([5, 5], [10, 10])], ["a", "b"])


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


def test_minimum_detectable_shrinks_with_the_square_root_of_the_scenarios():
    diffs = [0.01, -0.01] * 8
    sixteen = minimum_detectable(diffs)
    sixty_four = minimum_detectable(diffs * 4)
    assert sixteen is not None and sixty_four is not None
    # (1.96 + 0.84) · sd / √k, sd ≈ 0.0103 for sixteen ±0.01.
    assert sixteen == pytest.approx(2.8016 * np.std(diffs, ddof=1) / 4, rel=1e-3)
    assert sixty_four == pytest.approx(sixteen / 2, rel=0.05)
    assert minimum_detectable([0.3]) is None


def test_a_paired_comparison_says_what_it_could_detect():
    # Ten scenarios, each with a copy that agrees: ten differences, not 20.
    a = [0.5 + 0.01 * (i % 3) for i in range(10)] * 2
    b = [0.5] * 20
    names = [f"s{i}" for i in range(10)] * 2
    cmp = compare_paired("a", "b", a, b, clusters=names)
    assert cmp.detectable == pytest.approx(minimum_detectable(cluster_means(
        [x - y for x, y in zip(a, b, strict=True)], names)))


def test_differ_upper_bound_is_the_exact_binomial_bound() -> None:
    from routesim_evolve.score.stats import differ_upper_bound

    # None of n differ: 1 - 0.05^(1/n) (the "rule of three", about 3/n).
    assert differ_upper_bound(0, 30) == pytest.approx(1 - 0.05 ** (1 / 30))
    assert differ_upper_bound(0, 99) < 0.03 < differ_upper_bound(0, 98)
    assert differ_upper_bound(3, 30) > differ_upper_bound(0, 30)
    assert differ_upper_bound(5, 5) == 1.0
    with pytest.raises(ValueError):
        differ_upper_bound(1, 0)
