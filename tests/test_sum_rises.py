"""GEPA's own acceptance rule (evolve/sum_rises.py): a child is kept when
its summed minibatch score rises, and its account says so."""

from __future__ import annotations

from types import SimpleNamespace

from gepa.strategies.acceptance import StrictImprovementAcceptance

from routesim_evolve.evolve.sum_rises import SumRises


def proposal(before: list[float], after: list[float]) -> SimpleNamespace:
    return SimpleNamespace(subsample_scores_before=before, subsample_scores_after=after)


def test_it_keeps_what_gepas_rule_keeps() -> None:
    for before, after in (([0.5, 0.5], [0.5, 0.6]), ([0.5, 0.5], [0.6, 0.4]),
                          ([0.5, 0.5], [0.4, 0.5]), ([], [0.1])):
        want = StrictImprovementAcceptance().should_accept(proposal(before, after), None)
        assert SumRises().should_accept(proposal(before, after), None) is want
        assert SumRises().keeps([], [], sum(before), sum(after)) is want


def test_its_account_gives_the_sums_and_the_bar() -> None:
    rule = SumRises()
    assert rule.should_accept(proposal([1.0, 0.2], [1.0, 0.3]), None)
    assert rule.last == "minibatch sum 1.2000 → 1.3000; kept when it rises"
    assert rule.reject_reason(proposal([0.3], [0.2]), None) \
        == "minibatch sum 0.3000 → 0.2000; kept when it rises"
