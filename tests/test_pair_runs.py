"""scripts/pair_runs.py: two `compare --json` files, a router after a change
against itself before, paired per sample and clustered by scenario."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from routesim_evolve.score.compare import Comparison, RouterScore

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "pair_runs.py"


def _comparison(scores: dict[str, float]) -> Comparison:
    """planner's scores by scenario, and a base scenario of lnd's."""
    rows = [RouterScore(router="planner", scenario=name, arena=name.split("-")[0], status="ok",
                        score=score, success=score, attempts_per_payment=1.0, fee_ppm=0.0)
            for name, score in scores.items()]
    rows.append(RouterScore(router="lnd-apriori", scenario="base-1", arena="base", status="ok",
                            score=0.5, success=0.5, attempts_per_payment=1.0, fee_ppm=0.0))
    return Comparison(routers=["planner", "lnd-apriori"], scores=rows, pairs=[])


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_pairs_each_router_after_against_before(tmp_path: Path):
    before = {"drift-1": 0.5, "drift-1~r1": 0.6, "drift-2": 0.7, "base-1": 0.8}
    after = {"drift-1": 0.6, "drift-1~r1": 0.6, "drift-2": 0.9, "base-1": 0.8,
             "drift-3": 0.1}  # only after: left out
    (tmp_path / "b.json").write_text(_comparison(before).model_dump_json())
    (tmp_path / "a.json").write_text(_comparison(after).model_dump_json())
    run = _run(str(tmp_path / "b.json"), str(tmp_path / "a.json"), "--arena", "drift")
    assert run.returncode == 0, run.stderr
    # Three drift samples of two scenarios; mean +0.1 (0.1, 0, 0.2); 2 wins, 1 tie.
    assert "| planner after | planner before | 3 (2) | 0.7000 | 0.6000 | +0.1000 |" in run.stdout
    assert "| 2/0/1 |" in run.stdout
    assert "lnd-apriori after" not in run.stdout  # no drift scenario of its own
    out = _run(str(tmp_path / "b.json"), str(tmp_path / "a.json")).stdout
    assert out.index("## base") < out.index("## drift") < out.index("## all")
    assert "| lnd-apriori after | lnd-apriori before | 1 (1) | 0.5000 | 0.5000 | +0.0000 |" in out


def test_a_file_that_is_no_comparison_is_named(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"routers": 3}')
    good = tmp_path / "good.json"
    good.write_text(_comparison({"base-1": 0.5}).model_dump_json())
    run = _run(str(good), str(bad))
    assert run.returncode == 2
    assert str(bad) in run.stderr and "compare --json" in run.stderr
    assert "Traceback" not in run.stderr
