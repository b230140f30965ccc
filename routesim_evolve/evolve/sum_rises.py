"""GEPA's own acceptance rule, with the account the run reads.

A child is kept when its score summed over the minibatch rises (gepa's
StrictImprovementAcceptance). The run's rules (acceptance.py, sequential.py)
ask for more; this is the rule they are measured against (docs/search.md), and the smallest
example of an acceptance rule (rules.py `AcceptanceRule`, registry.py
"sum-rises").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from routesim_evolve.evolve.rules import SideInfo, minibatch_sums, sums_account


class SumRises:
    """Keep a child whose summed minibatch score beats its parent's."""

    def __init__(self) -> None:
        self.last = ""

    def should_accept(self, proposal: Any, state: Any) -> bool:
        old, new = minibatch_sums(proposal)
        self.last = self.reject_reason(proposal, state)
        return new > old

    def reject_reason(self, proposal: Any, state: Any) -> str:
        return f"{sums_account(*minibatch_sums(proposal))}; kept when it rises"

    def keeps(self, before: Sequence[SideInfo], after: Sequence[SideInfo],
              old_sum: float, new_sum: float) -> bool:
        return new_sum > old_sum
