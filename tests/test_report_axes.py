"""The secondary axes in a user's units and per arena: seconds to complete and
the fee above the cheapest plan, from results whose numbers are known; and
the sanity flag of a router that pays below the cheapest plan."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from routesim_evolve.report.heldout import axis_rows, render_axes, sanity_flags
from routesim_evolve.score.axes import ScoreAxes
from routesim_evolve.score.compare import Comparison, RouterScore, delivered_costs
from routesim_evolve.simulate.result_format import Result

RESULT = Path(__file__).resolve().parents[1] / "docs" / "examples" / "result-example.json"


def _result(*payments: tuple[bool, int, int, int, float]) -> Result:
    """The example with payments of (success, amount, fee, cheapest, elapsed)."""
    doc = orjson.loads(RESULT.read_bytes())
    template = next(p for p in doc["payments"] if p["success"])
    doc["payments"] = [
        dict(template, index=i, success=ok, amount_msat=amount, delivered_msat=amount,
             fee_msat=fee, cheapest_fee_msat=cheapest, elapsed_s=elapsed)
        for i, (ok, amount, fee, cheapest, elapsed) in enumerate(payments)
    ]
    return Result.model_validate(doc)


def test_costs_are_means_over_the_delivered_payments():
    res = _result((True, 1_000_000, 300, 100, 2.0), (True, 2_000_000, 100, 100, 6.0),
                  (False, 5_000_000, 0, 0, 40.0))
    costs = delivered_costs(res)
    assert costs["seconds"] == pytest.approx(4.0)
    # 200 msat of 1,000,000 above the cheapest plan, then none.
    assert costs["fee_over_cheapest_ppm"] == pytest.approx((200 + 0) / 2)
    assert delivered_costs(_result((False, 1_000_000, 0, 0, 2.0))) == {}


def _score(router: str, scenario: str, arena: str, retry: float, seconds: float | None,
           below: int = 0) -> RouterScore:
    delivered = seconds is not None
    axes = ScoreAxes(success=0.5 if delivered else 0.0, retry_efficiency=retry,
                     time_efficiency=0.5, fee_efficiency=0.9, payments=4, version=3)
    return RouterScore(router=router, scenario=scenario, arena=arena, status="ok",
                       score=axes.score, success=axes.success, attempts_per_payment=1.0,
                       fee_ppm=10.0, delivered=2 if delivered else 0, axes=axes,
                       seconds=seconds, fee_over_cheapest_ppm=50.0 if delivered else None,
                       below_cheapest=below)


def test_axes_per_arena_skip_scenarios_without_a_delivery():
    comparison = Comparison(routers=["mine"], pairs=[], scores=[
        _score("mine", "d1", "drift", 1.0, 4.0), _score("mine", "d2", "drift", 0.5, 8.0),
        _score("mine", "b1", "base", 0.0, None),
    ])
    rows = {r.arena: r for r in axis_rows(comparison)}
    assert rows["drift"].retry_efficiency == pytest.approx(0.75)
    assert rows["drift"].seconds == pytest.approx(6.0)
    assert rows["base"].retry_efficiency is None and rows["base"].seconds is None
    assert rows["all"].scenarios == 3 and rows["all"].seconds == pytest.approx(6.0)
    assert rows["all"].success == pytest.approx(1 / 3)
    text = render_axes(comparison)
    assert "| drift | mine | 2 | 0.500 | 0.750 | 0.500 | 0.900 | 6.0 | 50 |" in text
    assert "| base | mine | 1 | 0.000 | — | — | — | — | — |" in text


def test_paying_below_the_cheapest_plan_is_flagged():
    comparison = Comparison(routers=["lnd-apriori", "mine"], pairs=[], scores=[
        _score("lnd-apriori", "b1", "base", 1.0, 2.0, below=2),
        _score("mine", "b1", "base", 1.0, 2.0),
    ])
    flags = sanity_flags(comparison)
    assert flags == ["b1: lnd-apriori paid less than the cheapest plan on 2 payment(s)"]
