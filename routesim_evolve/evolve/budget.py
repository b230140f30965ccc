"""The run's budget: a hard limit on scenario runs, and GEPA's stop condition.

A metric call is one candidate run on one scenario. A pair the run's
evaluation cache already answers costs nothing: re-scoring a parent on a
minibatch it met before, a proposal identical to a candidate already
evaluated, or the pairs a killed run had finished before it resumed. The
count is read from the cache itself (one file per pair), so it survives a
crash with the cache and cannot drift from it.

GEPA checks its own `max_metric_calls` only between iterations and counts
cache hits too, so a run overran its budget by up to one iteration (a
parent's minibatch, a child's minibatch and a full val pass). This stopper
refuses to start an iteration that could overrun instead: a run never spends
more than its limit, and stops with less than one iteration's worth left.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class BudgetTooSmall(ValueError):
    """The budget cannot pay for the seed's val pass and one iteration."""


class EvalBudget:
    """A GEPA stopper (`__call__(state) -> bool`) over the run's own count."""

    def __init__(self, limit: int, *, minibatch: int, val_size: int,
                 spent: Callable[[], int]) -> None:
        #: The most an iteration can cost: the parent and the child on the
        #: minibatch, then the child on the whole val split.
        self.iteration_cost = 2 * minibatch + val_size
        smallest = val_size + self.iteration_cost
        if limit < smallest:
            raise BudgetTooSmall(
                f"--max-evals {limit} is too small: the seed's val pass takes {val_size} "
                f"scenario runs and one iteration up to {self.iteration_cost} "
                f"({minibatch} + {minibatch} on the minibatch, {val_size} on val); "
                f"give at least {smallest}"
            )
        self.limit = limit
        self._spent = spent

    @property
    def used(self) -> int:
        """Scenario runs spent so far."""
        return self._spent()

    @property
    def left(self) -> int:
        return max(0, self.limit - self.used)

    def __call__(self, state: Any = None) -> bool:
        """True when the next iteration could overrun the limit."""
        return self.left < self.iteration_cost
