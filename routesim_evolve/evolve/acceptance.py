"""When a proposal is kept: a paired test over payments, not a bare sum.

GEPA keeps a child whose score summed over the minibatch beats its
parent's. Both ran the same payments in the same worlds (common random
numbers), so the difference is exact on those scenarios, but it is one draw
of which scenarios the minibatch holds: a knob moved by the search flips a
payment or two this way or that, and a sum that rose by one flipped payment
says little about the next scenarios. Every kept child costs a full val
evaluation, and a lucky one can be named best.

The rule: the minibatch's sum must rise; the payments' paired differences
(the child's share of the score minus the parent's, payment by payment,
score/axes.py `payment_shares`) must have a t statistic of at least
`ACCEPT_T`: mean / (sd / sqrt(n)); and the child must have risen on more
than half of the minibatch's scenarios. One payment that moved alone gives
t = 1.0 however many the minibatch holds, so it is never enough; two that
improved and none that got worse give 1.4. The payments of one scenario
move together (a knob that sizes parts differently moves most of them), so
the t alone would let one scenario carry a child; the majority asks the
gain to show on most of the scenarios the minibatch drew. A scenario where
a router left no result counts each payment at 0.

`bench/bench_acceptance.py` measures the rule on real candidates
(docs/search.md): of the children not better on the held-out scenarios,
GEPA's rule keeps 33.1 % of minibatches, the t alone 8.7 %, this rule
6.2 %; of the better ones, 51.8 %, 21.1 % and 20.4 %.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from routesim_evolve.evolve.rules import SideInfo, minibatch_sums, sums_account
from routesim_evolve.score.feedback import ScenarioFeedback

#: The least paired t statistic over the minibatch's payments that keeps a
#: child: the lowest that one payment moving alone (t = 1) does not reach
#: (bench/bench_acceptance.py measures it).
ACCEPT_T = 1.2


def payment_differences(before: Sequence[SideInfo],
                        after: Sequence[SideInfo]) -> list[float]:
    """The child's share minus the parent's, payment by payment, over the
    minibatch's scenarios (GEPA's side infos, in the same order)."""
    diffs: list[float] = []
    for old, new in zip(before, after, strict=True):
        a = ScenarioFeedback.from_side_info(old).shares
        b = ScenarioFeedback.from_side_info(new).shares
        n = max(len(a), len(b))
        a, b = a or [0.0] * n, b or [0.0] * n
        if len(a) != len(b):
            raise ValueError("the two evaluations of a scenario saw different payments")
        diffs += [y - x for x, y in zip(a, b, strict=True)]
    return diffs


def axis_deltas(before: Sequence[SideInfo],
                after: Sequence[SideInfo]) -> dict[str, float]:
    """The child's score terms minus the parent's, by axis, summed over the
    minibatch's scenarios."""
    out = dict.fromkeys(("success", "retry", "time", "fee"), 0.0)
    for old, new in zip(before, after, strict=True):
        a = ScenarioFeedback.from_side_info(old).axes.terms()
        b = ScenarioFeedback.from_side_info(new).axes.terms()
        for axis in out:
            out[axis] += getattr(b, axis) - getattr(a, axis)
    return out


def scenario_differences(before: Sequence[SideInfo],
                         after: Sequence[SideInfo]) -> list[float]:
    """The child's score minus the parent's on each minibatch scenario
    (GEPA's side infos, in the same order): each the sum of its payments'
    share differences (the sequential rule's observations, sequential.py)."""
    return [ScenarioFeedback.from_side_info(new).score
            - ScenarioFeedback.from_side_info(old).score
            for old, new in zip(before, after, strict=True)]


def scenarios_risen(before: Sequence[SideInfo],
                    after: Sequence[SideInfo]) -> int:
    """How many of the minibatch's scenarios the child scored higher on."""
    return sum(d > 0 for d in scenario_differences(before, after))


def majority(scenarios: int) -> int:
    """The fewest risen scenarios that keep a child: more than half."""
    return scenarios // 2 + 1


def paired_t(diffs: Sequence[float]) -> float:
    """mean / (sd / sqrt(n)) of the differences: +inf when they are all
    equal and positive, 0 when there are none or all are 0."""
    n = len(diffs)
    if n == 0:
        return 0.0
    mean = sum(diffs) / n
    if n == 1:
        return math.inf if mean > 0 else (-math.inf if mean < 0 else 0.0)
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    if var <= 0:
        return math.copysign(math.inf, mean) if mean else 0.0
    return mean / math.sqrt(var / n)


class PairedAcceptance:
    """The paired acceptance rule (rules.py `AcceptanceRule`, registry.py
    "paired"; the run's default before the sequential rule): the sum rises,
    the paired t over the minibatch's payments reaches `threshold`, and
    (with `majority`) the child rose on more than half of the minibatch's
    scenarios."""

    def __init__(self, threshold: float = ACCEPT_T, majority: bool = True) -> None:
        self.threshold = threshold
        self.majority = majority
        #: What the last proposal judged moved (its sums, each axis, its
        #: paired t): the dispatcher hands it to the proposer with GEPA's
        #: verdict, whose accepted event carries no reason.
        self.last = ""

    def verdict(self, before: Sequence[SideInfo], after: Sequence[SideInfo],
                old_sum: float, new_sum: float) -> tuple[bool, float]:
        """Whether to keep the child, and the paired t it reached."""
        t = paired_t(payment_differences(before, after))
        spread = not self.majority or scenarios_risen(before, after) >= majority(len(before))
        return new_sum > old_sum and t >= self.threshold and spread, t

    def keeps(self, before: Sequence[SideInfo], after: Sequence[SideInfo],
              old_sum: float, new_sum: float) -> bool:
        return self.verdict(before, after, old_sum, new_sum)[0]

    def should_accept(self, proposal: Any, state: Any) -> bool:
        keep, _ = self._judge(proposal)
        self.last = self.reject_reason(proposal, state)
        return keep

    def reject_reason(self, proposal: Any, state: Any) -> str:
        """The sums, the change on each axis, the paired t and the scenarios
        risen: what the proposer's memory recalls of a proposal."""
        _, t = self._judge(proposal)
        old, new = minibatch_sums(proposal)
        axes = spread = ""
        if proposal.eval_before is not None and proposal.eval_after is not None \
                and proposal.eval_before.trajectories and proposal.eval_after.trajectories:
            before, after = proposal.eval_before.trajectories, proposal.eval_after.trajectories
            deltas = axis_deltas(before, after)
            axes = " (" + ", ".join(f"{k} {v:+.4f}" for k, v in deltas.items()) + ")"
            if self.majority:
                spread = (f"; it rose on {scenarios_risen(before, after)} of {len(before)} "
                          f"scenarios, kept from {majority(len(before))}")
        return (f"{sums_account(old, new)}{axes}{spread}; paired t over its "
                f"payments {t:.2f}, kept from {self.threshold}")

    def _judge(self, proposal: Any) -> tuple[bool, float]:
        before, after = proposal.eval_before, proposal.eval_after
        old, new = minibatch_sums(proposal)
        if before is None or after is None or not before.trajectories \
                or not after.trajectories:
            # No side infos to pair: GEPA's own rule.
            return new > old, 0.0
        return self.verdict(before.trajectories, after.trajectories, old, new)
