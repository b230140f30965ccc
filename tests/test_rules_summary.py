"""What a comparison says of the rules real nodes enforce that its scenarios
played (corpus/rules_summary.py): every compare, eval and report prints it."""

from __future__ import annotations

from pathlib import Path

from routesim_evolve.corpus.rules_summary import rules_line
from routesim_evolve.corpus.schema import Scenario

REPO = Path(__file__).resolve().parents[1]


def _scenario(path: Path) -> Scenario:
    return Scenario.model_validate_json(path.read_bytes())


def test_the_bundled_corpus_says_its_rules() -> None:
    played = [_scenario(p) for p in sorted((REPO / "corpus" / "test").glob("*.json"))]
    line = rules_line(played)
    assert line.startswith("Rules real nodes enforce: reserves 1% (at least 354 sat)")
    for said in ("fee buffer at 2,500 sat/kw", "HTLC slots 483 (30 for 33% of nodes)",
                 "20% of nodes flaky", f"in {len(played)} of {len(played)} scenarios"):
        assert said in line


def test_scenarios_without_rules_say_none_and_a_mix_counts_each() -> None:
    old = _scenario(REPO / "docs" / "examples" / "drift-example.json")
    new = _scenario(REPO / "docs" / "examples" / "base-example.json")
    assert old.rules is None and new.rules is not None
    assert "none (scenarios without a rules block" in rules_line([old])
    mixed = rules_line([old, new, new])
    assert "1 of 3 scenarios: none" in mixed and "2 of 3 scenarios: reserves 1%" in mixed
    assert "Shards held until the whole amount arrived in 0 of 3 scenarios" in mixed
