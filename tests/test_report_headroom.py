"""The headroom column: the share of the better lnd router's distance to the
feasible bound a router closes, on delivered of feasible, with its interval
over scenarios (a scenario and its reseeded copies counted as one draw)."""

from __future__ import annotations

import pytest

from routesim_evolve.corpus.examples import original_name
from routesim_evolve.report.heldout import arena_rows, render_sanity, render_table
from routesim_evolve.score.compare import Comparison, RouterScore


def _row(router: str, scenario: str, delivered: int, feasible: int | None = 10) -> RouterScore:
    """A router on a scenario of 12 payments, `feasible` of them feasible."""
    return RouterScore(router=router, scenario=scenario, arena="drift", status="ok",
                       score=delivered / 12, success=delivered / 12, attempts_per_payment=1.0,
                       fee_ppm=100.0, delivered=delivered, feasible=feasible)


def _comparison(mine: dict[str, int]) -> Comparison:
    """mine delivers the given payments of 10 feasible; lnd-apriori 5 of 10,
    lnd-bimodal 4; the oracle all 10."""
    scores = []
    for scenario, delivered in mine.items():
        scores += [_row("mine", scenario, delivered), _row("lnd-apriori", scenario, 5),
                   _row("lnd-bimodal", scenario, 4), _row("oracle", scenario, 10)]
    return Comparison(routers=["mine", "lnd-apriori", "lnd-bimodal", "oracle"], pairs=[],
                      scores=scores)


def _drift_row(comparison: Comparison, router: str = "mine"):
    return next(r for r in arena_rows(comparison) if (r.arena, r.router) == ("drift", router))


@pytest.mark.parametrize(("name", "original"), [
    ("test-drift-001~r3", "test-drift-001"),
    ("test-drift-001", "test-drift-001"),
    ("odd~rname", "odd~rname"),  # not a copy mark: no number after it
])
def test_original_name(name: str, original: str) -> None:
    assert original_name(name) == original


def test_a_constant_share_has_a_point_interval_in_the_table() -> None:
    row = _drift_row(_comparison({"a": 7, "b": 7, "c": 7}))
    assert (row.delivered, row.feasible, row.of_feasible) == (21, 30, pytest.approx(0.7))
    assert row.headroom == pytest.approx(0.4)
    assert (row.headroom_low, row.headroom_high) == pytest.approx((0.4, 0.4))
    table = render_table(_comparison({"a": 7, "b": 7, "c": 7}))
    assert "| 21 / 30 | 70.0 % |" in table and "| +40 % [+40, +40] |" in table


def test_the_oracle_is_measured_against_the_bound_too() -> None:
    oracle = _drift_row(_comparison({"a": 7, "b": 6}), "oracle")
    assert oracle.headroom == pytest.approx(1.0)
    assert _drift_row(_comparison({"a": 7}), "lnd-apriori").headroom is None


def test_no_gap_when_lnd_delivers_all_that_is_feasible() -> None:
    scores = [_row("mine", "a", 8), _row("lnd-apriori", "a", 10), _row("lnd-bimodal", "a", 9)]
    comparison = Comparison(routers=["mine", "lnd-apriori", "lnd-bimodal"], pairs=[],
                            scores=scores)
    row = _drift_row(comparison)
    assert row.no_gap and row.headroom_text() == "— (no gap)"


def test_a_result_from_before_the_bound_shows_no_share() -> None:
    scores = [_row("mine", "a", 8, None), _row("lnd-apriori", "a", 5)]
    row = _drift_row(Comparison(routers=["mine", "lnd-apriori"], pairs=[], scores=scores))
    assert row.feasible is None and row.of_feasible_text() == "—" and row.headroom is None


def test_the_sanity_check_flags_a_payment_beyond_the_bound() -> None:
    comparison = _comparison({"a": 7})
    assert "no payment delivered beyond the feasible bound" in render_sanity(comparison)
    comparison.scores[0].beyond_bound = 1
    assert "mine delivered 1 payment(s) the feasible bound says no router could" in (
        render_sanity(comparison))


def test_reseeded_copies_are_not_more_scenarios() -> None:
    # Two scenarios that disagree (the whole gap closed, none of it); ten
    # agreeing copies of each must not make the interval narrower than the two
    # scenarios alone allow.
    mine = {"a": 10, "b": 5}
    with_copies = dict(mine)
    for k in range(1, 11):
        with_copies |= {f"a~r{k}": 10, f"b~r{k}": 5}
    alone, copied = _drift_row(_comparison(mine)), _drift_row(_comparison(with_copies))
    assert copied.headroom == pytest.approx(alone.headroom) == pytest.approx(0.5)
    assert copied.headroom_low == pytest.approx(0.0) and copied.headroom_high == pytest.approx(1.0)


def test_one_scenario_has_no_interval() -> None:
    row = _drift_row(_comparison({"a": 7, "a~r1": 8}))
    assert row.headroom is not None and row.headroom_low is None
    assert row.headroom_text() == f"{100 * row.headroom:+.0f} %"
