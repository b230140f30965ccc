"""The run's budget is a limit: it refuses what it cannot pay for, and stops
before an iteration that could overrun it."""

from __future__ import annotations

import pytest

from routesim_evolve.evolve.budget import BudgetTooSmall, EvalBudget


def test_a_budget_below_the_seed_and_one_iteration_is_refused():
    with pytest.raises(BudgetTooSmall, match="at least 22"):
        EvalBudget(21, minibatch=3, val_size=8, spent=lambda: 0)
    EvalBudget(22, minibatch=3, val_size=8, spent=lambda: 0)


@pytest.mark.parametrize(("spent", "stop"), [(0, False), (146, False), (147, True), (160, True)])
def test_stops_when_the_next_iteration_could_overrun(spent: int, stop: bool):
    budget = EvalBudget(160, minibatch=3, val_size=8, spent=lambda: spent)
    assert budget.iteration_cost == 14
    assert budget(None) is stop
    assert budget.left == 160 - spent
