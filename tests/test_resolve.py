"""The closing held-out table plays reseeded draws of the test split until
the best's comparisons can detect ±0.02, within the evaluations allowed
(score/resolve.py), and says what it reached."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from routesim_evolve.score import resolve
from routesim_evolve.score.resolve import compare_until_resolved


def fake_compare(one_draw: float, played: list[int]):
    """compare_routers whose best-against-parent comparison detects
    `one_draw` / √draws, as the square-root law says."""

    def compare(candidates, examples, evaluator, references, *, workers=None, revalidate=0):
        draws = revalidate + 1
        played.append(draws)
        pairs = [SimpleNamespace(a="best", b="parent", detectable=one_draw / draws ** 0.5),
                 SimpleNamespace(a="parent", b="seed", detectable=1.0)]  # not the best's
        return SimpleNamespace(pairs=pairs)

    return compare


@pytest.mark.parametrize("allowed,draws,resolved", [
    (10_000, 13, True),   # (0.07 / 0.02)² = 12.25: 13 draws detect ±0.0194
    (96 * 5, 5, False),   # the evaluations pay for 5 draws of 3 routers on 32 scenarios
    (160, 1, False),      # not even a second draw: one, and said so
])
def test_draws_until_the_best_detects_the_target_or_the_budget_ends(
        monkeypatch: pytest.MonkeyPatch, allowed: int, draws: int, resolved: bool) -> None:
    played: list[int] = []
    monkeypatch.setattr(resolve, "compare_routers", fake_compare(0.07, played))
    routers = {"best": "b", "parent": "p", "seed": "s"}
    _, resolution = compare_until_resolved(routers, [object()] * 32, None, None,  # type: ignore[arg-type]
                                           focus="best", allowed=allowed)
    assert resolution.draws == draws and played[-1] == draws
    assert len(played) <= 2  # one draw, then straight to the number needed
    assert resolution.evaluations == draws * 96
    note = resolution.note()
    assert ("detects ±0.019 or finer" in note) if resolved else ("not the ±0.02 asked" in note)


def test_a_comparison_fine_enough_at_once_plays_one_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    played: list[int] = []
    monkeypatch.setattr(resolve, "compare_routers", fake_compare(0.015, played))
    _, resolution = compare_until_resolved({"best": "b"}, [object()] * 8, None, None,  # type: ignore[arg-type]
                                           focus="best", allowed=10_000)
    assert played == [1] and resolution.draws == 1
