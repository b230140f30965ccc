"""Every report flags a scenario where one router delivers nothing while
another delivers something, with each router's reason."""

from __future__ import annotations

from routesim_evolve.report.heldout import render_sanity, sanity_flags
from routesim_evolve.score.compare import Comparison, RouterScore


def _row(router: str, scenario: str, delivered: int, reason: str = "") -> RouterScore:
    return RouterScore(router=router, scenario=scenario, arena="base", status="ok",
                       score=delivered / 20, success=delivered / 20, attempts_per_payment=1.0,
                       fee_ppm=100.0, delivered=delivered, reason=reason)


def test_one_router_delivering_nothing_is_flagged_with_every_reason():
    comparison = Comparison(routers=["seed", "lnd-apriori"], pairs=[], scores=[
        _row("seed", "base-001", 21, "179/200 failed: router_gave_up (no route)"),
        _row("lnd-apriori", "base-001", 0,
             "200/200 failed: router_gave_up (lnd: insufficient local balance)"),
        _row("seed", "base-002", 0, "20/20 failed: attempts_exhausted"),
        _row("lnd-apriori", "base-002", 0, "20/20 failed: router_gave_up"),
        _row("seed", "base-003", 12), _row("lnd-apriori", "base-003", 15),
    ])
    flags = sanity_flags(comparison)
    assert len(flags) == 1 and flags[0].startswith("base-001:")
    assert "lnd-apriori delivered 0 (200/200 failed" in flags[0]
    assert "insufficient local balance" in flags[0] and "seed delivered 21" in flags[0]
    assert "1 flag(s)" in render_sanity(comparison)


def test_no_flag_says_so():
    fine = Comparison(routers=["a", "b"], pairs=[], scores=[_row("a", "s", 3), _row("b", "s", 4)])
    assert sanity_flags(fine) == []
    assert render_sanity(fine).startswith("Sanity check: no scenario")
