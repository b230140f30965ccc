"""The headroom column: the share of the gap between the better lnd router and
the oracle a router closes, with its interval over scenarios (a scenario and
its reseeded copies counted as one draw)."""

from __future__ import annotations

import pytest

from routesim_evolve.corpus.examples import original_name
from routesim_evolve.report.heldout import arena_rows, render_table
from routesim_evolve.score.compare import Comparison, RouterScore


def _row(router: str, scenario: str, score: float) -> RouterScore:
    return RouterScore(router=router, scenario=scenario, arena="drift", status="ok",
                       score=score, success=score, attempts_per_payment=1.0, fee_ppm=100.0,
                       delivered=1)


def _comparison(mine: dict[str, float]) -> Comparison:
    scores = []
    for scenario, score in mine.items():
        scores += [_row("mine", scenario, score), _row("lnd-apriori", scenario, 0.5),
                   _row("lnd-bimodal", scenario, 0.4), _row("oracle", scenario, 0.9)]
    return Comparison(routers=["mine", "lnd-apriori", "lnd-bimodal", "oracle"], pairs=[],
                      scores=scores)


def _drift_row(comparison: Comparison):
    return next(r for r in arena_rows(comparison) if (r.arena, r.router) == ("drift", "mine"))


@pytest.mark.parametrize(("name", "original"), [
    ("test-drift-001~r3", "test-drift-001"),
    ("test-drift-001", "test-drift-001"),
    ("odd~rname", "odd~rname"),  # not a copy mark: no number after it
])
def test_original_name(name: str, original: str) -> None:
    assert original_name(name) == original


def test_a_constant_share_has_a_point_interval_in_the_table() -> None:
    row = _drift_row(_comparison({"a": 0.7, "b": 0.7, "c": 0.7}))
    assert row.headroom == pytest.approx(0.5)
    assert (row.headroom_low, row.headroom_high) == pytest.approx((0.5, 0.5))
    assert "| +50 % [+50, +50] |" in render_table(_comparison({"a": 0.7, "b": 0.7, "c": 0.7}))


def test_reseeded_copies_are_not_more_scenarios() -> None:
    # Two scenarios that disagree (the whole gap closed, none of it); ten
    # agreeing copies of each must not make the interval narrower than the two
    # scenarios alone allow.
    mine = {"a": 0.9, "b": 0.5}
    with_copies = dict(mine)
    for k in range(1, 11):
        with_copies |= {f"a~r{k}": 0.9, f"b~r{k}": 0.5}
    alone, copied = _drift_row(_comparison(mine)), _drift_row(_comparison(with_copies))
    assert copied.headroom == pytest.approx(alone.headroom) == pytest.approx(0.5)
    assert copied.headroom_low == pytest.approx(0.0) and copied.headroom_high == pytest.approx(1.0)


def test_one_scenario_has_no_interval() -> None:
    row = _drift_row(_comparison({"a": 0.7, "a~r1": 0.8}))
    assert row.headroom is not None and row.headroom_low is None
    assert row.headroom_text() == f"{100 * row.headroom:+.0f} %"
