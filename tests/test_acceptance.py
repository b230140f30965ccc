"""The acceptance rule (evolve/acceptance.py): a child is kept when the
minibatch's sum rises, the paired t over its payments reaches the
threshold and it rose on most of the minibatch's scenarios; the payments'
shares add up to the score."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest
from repo_files import REPO

from routesim_evolve.evolve.acceptance import (
    PairedAcceptance,
    paired_t,
    payment_differences,
)
from routesim_evolve.score.axes import ScoreAxes, payment_shares, score_result
from routesim_evolve.score.feedback import ScenarioFeedback
from routesim_evolve.simulate.result_format import Result

AXES = ScoreAxes(success=0.5, retry_efficiency=0.5, fee_efficiency=0.5, payments=2)


def info(shares: list[float], name: str = "s") -> dict:
    fb = ScenarioFeedback(scenario=name, arena="base", score=sum(shares), axes=AXES,
                          references={}, text="", shares=shares)
    return fb.side_info()


def proposal(before: list[list[float]], after: list[list[float]]) -> SimpleNamespace:
    old = [info(s, f"s{i}") for i, s in enumerate(before)]
    new = [info(s, f"s{i}") for i, s in enumerate(after)]
    return SimpleNamespace(
        subsample_scores_before=[sum(s) for s in before],
        subsample_scores_after=[sum(s) for s in after],
        eval_before=SimpleNamespace(trajectories=old),
        eval_after=SimpleNamespace(trajectories=new),
    )


@pytest.mark.parametrize("diffs,want", [
    ([0.0] * 59 + [0.05], 1.0),           # one payment of sixty: t = 1
    ([0.0] * 58 + [0.05, 0.05], 1.43),    # two
    ([0.5] * 10, math.inf),               # all alike and up
    ([], 0.0),
    ([0.0, 0.0], 0.0),
    ([0.1, -0.1], 0.0),
])
def test_paired_t(diffs: list[float], want: float) -> None:
    assert paired_t(diffs) == pytest.approx(want, abs=0.01)


def test_one_flipped_payment_is_not_enough_and_several_are() -> None:
    flat = [[0.04] * 20 for _ in range(3)]
    one = [row[:] for row in flat]
    one[0][3] = 0.0  # the parent missed one payment the child delivers
    rule = PairedAcceptance()
    assert rule.should_accept(proposal(one, flat), None) is False
    assert "paired t over its payments 1.00" in rule.reject_reason(proposal(one, flat), None)
    several = [row[:] for row in flat]
    for i in range(5):
        several[i % 3][i] = 0.0
    assert rule.should_accept(proposal(several, flat), None) is True
    # GEPA's rule would have kept the first: its sum rose.
    assert sum(map(sum, flat)) > sum(map(sum, one))


def test_a_gain_on_one_scenario_of_three_is_not_kept() -> None:
    flat = [[0.04] * 20 for _ in range(3)]
    worse = [row[:] for row in flat]
    for i in range(6):
        worse[0][i] = 0.0  # the child gains six payments, all on the first scenario
    rule = PairedAcceptance()
    assert rule.should_accept(proposal(worse, flat), None) is False
    assert "it rose on 1 of 3 scenarios, kept from 2; paired t over its payments 2.56" \
        in rule.last
    assert PairedAcceptance(majority=False).should_accept(proposal(worse, flat), None) is True
    spread = [row[:] for row in worse]
    spread[1][0] = 0.0  # and one more on a second scenario
    assert rule.should_accept(proposal(spread, flat), None) is True


def test_a_sum_that_falls_is_never_kept_however_consistent() -> None:
    before = [[0.05] * 20]
    after = [[0.05] * 19 + [0.0]]
    assert PairedAcceptance(threshold=-10).should_accept(proposal(before, after), None) is False


def test_a_scenario_without_a_result_counts_its_payments_at_zero() -> None:
    diffs = payment_differences([info([])], [info([0.1, 0.2])])
    assert diffs == [0.1, 0.2]
    with pytest.raises(ValueError):
        payment_differences([info([0.1])], [info([0.1, 0.2])])


def test_shares_add_up_to_the_score() -> None:
    result = Result.model_validate_json(
        (REPO / "docs" / "examples" / "result-example.json").read_bytes())
    shares = payment_shares(result)
    assert len(shares) == len(result.payments)
    assert sum(shares) == pytest.approx(score_result(result).score)
    assert all(s == 0 for s, p in zip(shares, result.payments, strict=True) if not p.success)


def test_a_rejection_says_what_moved_on_each_axis() -> None:
    flat = [[0.04] * 20 for _ in range(3)]
    one = [row[:] for row in flat]
    one[0][3] = 0.0
    reason = PairedAcceptance().reject_reason(proposal(one, flat), None)
    assert reason.startswith("minibatch sum 2.3600 → 2.4000 (success +0.0000, retry +0.0000")
    assert reason.endswith("paired t over its payments 1.00, kept from 1.2")


def test_the_rule_keeps_its_account_of_the_last_proposal() -> None:
    flat = [[0.04] * 20 for _ in range(3)]
    several = [row[:] for row in flat]
    for i in range(5):
        several[i % 3][i] = 0.0
    rule = PairedAcceptance()
    assert rule.should_accept(proposal(several, flat), None)
    assert rule.last.startswith("minibatch sum 2.2000 → 2.4000 (success")
