"""The distance to the oracle by score axis: the oracle's score terms less a
router's, paired on the same scenarios, per arena and over all."""

from __future__ import annotations

import pytest

from routesim_evolve.report.heldout import distance_rows, render_distance
from routesim_evolve.score.axes import ScoreTerms
from routesim_evolve.score.compare import Comparison, RouterScore


def _row(router: str, scenario: str, arena: str,
         terms: tuple[float, float, float, float]) -> RouterScore:
    t = ScoreTerms(success=terms[0], retry=terms[1], time=terms[2], fee=terms[3])
    return RouterScore(router=router, scenario=scenario, arena=arena, status="ok",
                       score=t.total, success=0.0,
                       attempts_per_payment=1.0, fee_ppm=100.0, delivered=1, terms=t)


# The oracle's terms differ by scenario, so that only a pairing by scenario
# gives the expected means.
ORACLE_TERMS = {"d1": (0.80, 0.05, 0.03, 0.04), "d2": (0.84, 0.05, 0.02, 0.04),
                "b1": (0.80, 0.05, 0.03, 0.04)}


def _comparison(with_oracle: bool = True) -> Comparison:
    mine = {("d1", "drift"): (0.70, 0.03, 0.01, 0.04), ("d2", "drift"): (0.76, 0.04, 0.02, 0.03),
            ("b1", "base"): (0.80, 0.05, 0.03, 0.04)}
    scores = []
    for (scenario, arena), terms in mine.items():
        scores += [_row("mine", scenario, arena, terms),
                   _row("lnd-apriori", scenario, arena, (0.6, 0.02, 0.02, 0.02))]
        if with_oracle:
            scores.append(_row("oracle", scenario, arena, ORACLE_TERMS[scenario]))
    routers = ["mine", "lnd-apriori", *(["oracle"] if with_oracle else [])]
    return Comparison(routers=routers, pairs=[], scores=scores)


def _by_arena(comparison: Comparison) -> dict[str, object]:
    return {r.arena: r for r in distance_rows(comparison)}


@pytest.mark.parametrize(("arena", "scenarios", "success", "retry", "time", "fee"), [
    ("drift", 2, ((0.80 - 0.70) + (0.84 - 0.76)) / 2, (0.02 + 0.01) / 2, (0.02 + 0.00) / 2,
     (0.00 + 0.01) / 2),
    ("base", 1, 0.0, 0.0, 0.0, 0.0),
    ("all", 3, 0.18 / 3, 0.03 / 3, 0.02 / 3, 0.01 / 3),
])
def test_the_parts_are_paired_means_and_sum_to_the_distance(arena, scenarios, success, retry,
                                                            time, fee) -> None:
    row = _by_arena(_comparison())[arena]
    assert row.router == "mine" and row.scenarios == scenarios
    assert (row.success, row.retry, row.time, row.fee) == pytest.approx(
        (success, retry, time, fee))
    assert row.distance == pytest.approx(success + retry + time + fee)


def test_references_get_no_row_and_the_table_shows_the_parts() -> None:
    comparison = _comparison()
    assert {r.router for r in distance_rows(comparison)} == {"mine"}
    row = "| drift | mine | 2 | +0.1200 | +0.0900 | +0.0150 | +0.0100 | +0.0050 |"
    assert row in render_distance(comparison)


def test_without_an_oracle_it_says_so() -> None:
    comparison = _comparison(with_oracle=False)
    assert distance_rows(comparison) == []
    assert render_distance(comparison) == "No oracle in this comparison: no distance to show."


def test_a_comparison_written_before_the_terms_shows_no_distance() -> None:
    comparison = _comparison()
    old = comparison.model_dump(mode="json")
    for s in old["scores"]:
        del s["terms"]
    loaded = Comparison.model_validate(old)
    assert all(s.terms is None for s in loaded.scores)
    assert distance_rows(loaded) == []
