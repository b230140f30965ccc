"""The search's rules plug in by name (evolve/registry.py): every registered
rule does what the run needs of it (evolve/rules.py, and GEPA's own
acceptance interface), an unknown name is refused, and the rule the
registry names is the one the driver runs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from gepa.strategies.acceptance import AcceptanceCriterion

from routesim_evolve.evolve import registry
from routesim_evolve.evolve.acceptance import PairedAcceptance
from routesim_evolve.evolve.confirm import confirm_best
from routesim_evolve.evolve.driver import evolve
from routesim_evolve.evolve.registry import (
    acceptance_rule,
    confirmation_rule,
    rule_name,
    run_acceptance,
)
from routesim_evolve.evolve.rules import AcceptanceRule
from routesim_evolve.evolve.sequential import SequentialAcceptance
from routesim_evolve.propose.offline import OfflineProposer
from routesim_evolve.runs.settings import EvolveSettings


@pytest.mark.parametrize("name", registry.ACCEPTANCE_RULES)
def test_every_acceptance_rule_is_one_gepa_and_the_run_can_use(name: str) -> None:
    rule = acceptance_rule(name)
    assert isinstance(rule, AcceptanceCriterion) and isinstance(rule, AcceptanceRule)
    assert rule.last == ""


def test_the_defaults_are_the_runs_rules() -> None:
    assert isinstance(acceptance_rule(), SequentialAcceptance)
    strict = acceptance_rule("paired", threshold=2.0)
    assert isinstance(strict, PairedAcceptance) and strict.threshold == 2.0
    assert confirmation_rule() is confirm_best


@pytest.mark.parametrize(("began", "asked", "used"), [
    (None, None, registry.DEFAULT_ACCEPTANCE),  # a new run
    ({"acceptance": None}, None, "paired"),  # begun when the default was paired
    ({"acceptance": "sum-rises"}, None, "sum-rises"),
    ({"acceptance": "sequential"}, None, "sequential"),
    ({"acceptance": "no-such-rule"}, None, "paired"),
    ({"acceptance": None}, "sequential", "sequential"),  # asked for: it wins
    ({"acceptance": "paired"}, "sum-rises", "sum-rises"),
])
def test_a_resumed_run_is_judged_by_the_rule_it_began_with(
        tmp_path: Path, began: dict[str, object] | None, asked: str | None, used: str) -> None:
    if began is not None:
        (tmp_path / "settings.json").write_bytes(orjson.dumps(began))
    assert run_acceptance(tmp_path, asked) == used


def test_each_rule_is_named_by_its_kind() -> None:
    for name in registry.ACCEPTANCE_RULES:
        assert rule_name(acceptance_rule(name)) == name
    assert rule_name(object()) is None  # type: ignore[arg-type]


def test_an_unknown_rule_is_refused_with_the_names() -> None:
    with pytest.raises(ValueError, match="paired, sequential, sum-rises"):
        acceptance_rule("lucky")
    with pytest.raises(ValueError, match="reseeded"):
        confirmation_rule("lucky")


@dataclass
class SeedNamed:
    named: int = 0

    def notes(self) -> list[str]:
        return ["the seed is named, unconfirmed"]


class NameTheSeed:
    """A trivial confirmation rule: the seed is named, and it says so."""

    def __init__(self) -> None:
        self.seen = 0

    def __call__(self, candidates, val_scores, val, evaluator, *, workers=None) -> SeedNamed:
        self.seen = len(candidates)
        return SeedNamed()


def test_the_driver_runs_the_rules_the_registry_names(
        tiny_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    confirm = NameTheSeed()
    monkeypatch.setitem(registry.CONFIRMATION_RULES, "seed", confirm)
    monkeypatch.setattr(registry, "DEFAULT_CONFIRMATION", "seed")
    monkeypatch.setattr(registry, "DEFAULT_ACCEPTANCE", "sum-rises")
    settings = EvolveSettings(corpus=tiny_corpus, run_dir=tmp_path / "run", max_evals=12,
                              max_concurrency=2)
    summary = evolve(settings, [OfflineProposer(seed=1)], say=lambda m: None)
    events = [orjson.loads(line) for line in (settings.run_dir / "log.jsonl").open("rb")]
    reasons = [e["reason"] for e in events if e["event"] == "rejected"]
    assert reasons and all(r.endswith("; kept when it rises") for r in reasons)
    assert confirm.seen == summary.candidates
    assert summary.best_val == summary.seed_val
    assert "the seed is named, unconfirmed" in (settings.run_dir / "report.md").read_text()
    # settings.json names the rule that judged, for the report and a resume.
    written = orjson.loads((settings.run_dir / "settings.json").read_bytes())
    assert written["acceptance"] == "sum-rises"


def test_a_sequential_rule_plays_children_beyond_the_minibatch_within_the_budget(
        tiny_corpus: Path, tmp_path: Path) -> None:
    """The driver attaches the run's train evidence to a sequential rule;
    every judged child's decision lands in the log and the report, and the
    extra evaluations stay inside the budget."""
    settings = EvolveSettings(corpus=tiny_corpus, run_dir=tmp_path / "run", max_evals=60,
                              max_concurrency=2)
    summary = evolve(settings, [OfflineProposer(seed=1)], say=lambda m: None,
                     acceptance=acceptance_rule("sequential"))
    events = [orjson.loads(line) for line in (settings.run_dir / "log.jsonl").open("rb")]
    judged = [e for e in events if e["event"] in ("accepted", "rejected")]
    assert judged and all("decision" in e for e in judged)
    assert summary.metric_calls <= 60
    assert [c.observations for c in summary.judged] == [
        e["decision"]["observations"] for e in judged]
    # A child the minibatch did not refuse was played on more train evidence.
    beyond = [c for c in summary.judged if c.observations > 3]
    assert beyond == [] or (settings.run_dir / "reseeded-train").is_dir()
    report = (settings.run_dir / "report.md").read_text()
    assert "## Children the acceptance judged" in report
    if not any(c.kept for c in summary.judged):
        # A run that kept nothing says what it refused, however it stopped.
        assert any(n.startswith("The acceptance refused") or "The acceptance refused" in n
                   for n in summary.notes), summary.notes
    assert any(n.startswith("held-out test: ") for n in summary.notes)
    # Resumed with a rule that has seen nothing, the run's log tells it what
    # was seen of each child, so the prompt still can.
    again = acceptance_rule("sequential")
    evolve(settings, [OfflineProposer(seed=1)], say=lambda m: None, acceptance=again)
    first = summary.judged[0]
    assert first.child is not None
    source = (settings.run_dir / "candidates" / f"{first.child}.go").read_text()
    assert again.account_of(source) == first.account()
