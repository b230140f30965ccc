"""Paired statistics on inputs whose answers are known."""

import pytest

from routesim_evolve.score.stats import bootstrap_mean_ci, compare_paired, wilcoxon_p


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
