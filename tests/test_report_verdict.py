"""The main job's last lines: whether the best beats the seed and the better
lnd router, said only when the paired interval excludes 0."""

from __future__ import annotations

from routesim_evolve.report.heldout import render_pairs, render_verdict
from routesim_evolve.score.compare import Comparison, RouterScore, pair_scores


def _comparison(best: list[float], seed: list[float], apriori: list[float],
                bimodal: list[float]) -> Comparison:
    routers = {"best": best, "seed": seed, "lnd-apriori": apriori, "lnd-bimodal": bimodal}
    scores = [RouterScore(router=r, scenario=f"s{i}", arena="base", status="ok", score=x,
                          success=x, attempts_per_payment=1.0, fee_ppm=0.0)
              for r, xs in routers.items() for i, x in enumerate(xs)]
    table = {r: {f"s{i}": x for i, x in enumerate(xs)} for r, xs in routers.items()}
    pairs = [pair_scores(a, b, table[a], table[b])
             for a, b in (("best", "seed"), ("best", "lnd-apriori"), ("best", "lnd-bimodal"),
                          ("seed", "lnd-apriori"))]
    return Comparison(routers=list(routers), scores=scores, pairs=pairs)


def test_a_clear_win_and_a_draw_against_the_better_lnd() -> None:
    n = 12
    noise = [0.01 * ((i * 7) % 5 - 2) for i in range(n - 2)] + [0.0, 0.0]
    best = [0.8 + e for e in noise]
    seed = [0.7] * n
    apriori = [0.8 + 0.5 * e for e in noise[::-1]]
    text = render_verdict(_comparison(best, seed, apriori, [0.6] * n))
    lines = text.splitlines()
    assert lines[0].startswith("best beats seed: +0.1000 [") and "excludes 0" in lines[0]
    # lnd-apriori is the better lnd router here, and best is not shown better.
    assert lines[1].startswith("best is not shown better than lnd-apriori:")
    assert "includes 0; this sample detects differences of about ±0.0" in lines[1]


def test_a_loss_is_called_a_loss() -> None:
    n = 8
    text = render_verdict(_comparison([0.5 + 0.001 * i for i in range(n)], [0.7] * n,
                                      [0.4] * n, [0.3] * n))
    assert text.splitlines()[0].startswith("best is worse than seed: -0.")


def test_the_pairs_table_shows_what_each_pair_could_detect() -> None:
    n = 6
    table = render_pairs(_comparison([0.8, 0.7] * 3, [0.7] * n, [0.7] * n, [0.6] * n))
    assert "| detectable |" in table and "| ±0.0" in table
    assert "80 % power" in table


def test_the_seed_itself_is_said_to_be_no_better() -> None:
    n = 5
    same = [0.6 + 0.01 * i for i in range(n)]
    text = render_verdict(_comparison(same, list(same), [0.4] * n, [0.3] * n))
    assert text.splitlines()[0] == (
        "best scores what seed scores on every scenario: it is not better.")


def test_a_best_worse_than_its_parent_is_said_so_first() -> None:
    """The run names a best that may be worse than its parent on test (val
    chose it): the verdict says so before anything else."""
    n = 8
    best = [0.6 + 0.001 * i for i in range(n)]
    routers = {"best": best, "parent": [0.7] * n, "seed": [0.5] * n,
               "lnd-apriori": [0.4] * n}
    scores = [RouterScore(router=r, scenario=f"s{i}", arena="base", status="ok", score=x,
                          success=x, attempts_per_payment=1.0, fee_ppm=0.0)
              for r, xs in routers.items() for i, x in enumerate(xs)]
    table = {r: {f"s{i}": x for i, x in enumerate(xs)} for r, xs in routers.items()}
    pairs = [pair_scores("best", b, table["best"], table[b])
             for b in ("parent", "seed", "lnd-apriori")]
    lines = render_verdict(Comparison(routers=list(routers), scores=scores,
                                      pairs=pairs)).splitlines()
    assert lines[0].startswith("best is worse than parent: -0.") and "excludes 0" in lines[0]
    assert lines[1].startswith("best beats seed: +0.")
