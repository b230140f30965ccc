"""The sequential acceptance (evolve/sequential.py, evolve/evidence.py): a
child not refused on its minibatch is played on more train evidence, a round
at a time, until an SPRT on the scenarios' paired differences decides."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from routesim_evolve.evolve.evidence import TrainEvidence, plan_rounds
from routesim_evolve.evolve.registry import acceptance_rule
from routesim_evolve.evolve.rules import DrawsEvidence
from routesim_evolve.evolve.sequential import (
    SequentialAcceptance,
    SequentialTest,
)
from routesim_evolve.score.axes import ScoreAxes
from routesim_evolve.score.feedback import ScenarioFeedback
from routesim_evolve.score.stats import mean_t_interval

AXES = ScoreAxes(success=0.5, retry_efficiency=0.5, fee_efficiency=0.5, payments=2)


def info(score: float, name: str) -> dict:
    return ScenarioFeedback(scenario=name, arena="base", score=score, axes=AXES,
                            references={}, text="", shares=[score]).side_info()


def never() -> Iterator[list[float]]:
    raise AssertionError("a round was drawn that the decision did not need")
    yield []  # pragma: no cover


def test_a_child_clearly_worse_on_its_minibatch_is_refused_there() -> None:
    decision = SequentialTest().decide([-0.02, 0.0, -0.01], never())
    assert (decision.kept, decision.outcome, decision.observations) == (False, "rejected", 3)


def test_a_child_that_ties_its_minibatch_gets_one_round_and_no_more() -> None:
    """A tie is not clearly worse (a change for one arena ties on others):
    the left-out scenarios are drawn; a child that ties them too is refused."""
    drawn = []

    def rounds() -> Iterator[list[float]]:
        for k in range(10):
            drawn.append(k)
            yield [0.0] * 5

    decision = SequentialTest().decide([0.0, 0.0, 0.0], rounds())
    assert (decision.kept, decision.outcome, decision.observations) == (False, "rejected", 8)
    assert drawn == [0]
    # One that gains where the minibatch did not look goes on.
    gains = SequentialTest().decide([0.0, 0.0, 0.0], iter([[0.03, 0.04, 0.0, 0.03, 0.05]]))
    assert gains.outcome != "rejected"


def test_a_clear_minibatch_gain_is_not_kept_before_the_least_observations() -> None:
    test = SequentialTest()
    drawn = []

    def rounds() -> Iterator[list[float]]:
        for k in range(10):
            drawn.append(k)
            yield [0.03, 0.02, 0.04, 0.03, 0.02]

    decision = test.decide([0.03, 0.03, 0.03], rounds())
    assert decision.kept and decision.outcome == "accepted"
    assert decision.observations == 8 == test.min_observations
    assert drawn == [0]  # one round was enough: the rest were never evaluated


def test_an_undecided_child_is_refused_at_the_cap() -> None:
    test = SequentialTest(max_observations=20)
    # Differences whose mean is half the gain worth keeping: the ratio
    # hovers near 0, between the bounds, until the cap.
    rounds = ([-0.01, 0.02] * 4 for _ in range(100))
    decision = test.decide([0.02, -0.01], rounds)
    assert (decision.outcome, decision.kept, decision.observations) == ("capped", False, 20)
    assert test.lower < decision.llr < test.upper


def test_a_child_worse_than_its_parent_is_refused() -> None:
    rng = random.Random(1)
    rounds = ([-0.01 + rng.gauss(0, 0.03) for _ in range(8)] for _ in range(20))
    decision = SequentialTest().decide([-0.02, 0.01, -0.01], rounds)
    assert decision.outcome == "rejected" and decision.gain < 0


@pytest.mark.parametrize("gain,lowest,highest", [
    (0.0, 0.0, 0.07),    # false acceptance: about alpha (0.05) or less
    (-0.01, 0.0, 0.01),  # a worse child is almost never kept
    (0.01, 0.75, 1.0),   # power at the gain worth keeping: about 1 - beta (0.8)
    (0.02, 0.95, 1.0),
])
def test_its_error_rates_hold_on_normal_differences(gain: float, lowest: float,
                                                     highest: float) -> None:
    """The SPRT's promise, checked by simulation: 2,000 children whose
    scenario differences are normal with sd 0.03 (rounds of 8, as a run
    with 8 train scenarios draws them)."""
    rng = random.Random(7)
    test = SequentialTest()
    kept = 0
    for _ in range(2000):
        first = [rng.gauss(gain, 0.03) for _ in range(3)]
        rounds = ([rng.gauss(gain, 0.03) for _ in range(8)] for _ in range(100))
        kept += test.decide(first, rounds).kept
    assert lowest <= kept / 2000 <= highest


def test_the_interval_of_the_gain() -> None:
    mean, low, high = mean_t_interval([0.01, 0.02, 0.03])
    assert mean == pytest.approx(0.02)
    assert low == pytest.approx(0.02 - 4.303 * 0.01 / 3 ** 0.5, abs=1e-4)
    assert high == pytest.approx(0.02 + 4.303 * 0.01 / 3 ** 0.5, abs=1e-4)


@pytest.mark.parametrize("settings", [
    {"alpha": 0.0}, {"beta": 0.6}, {"gain": 0.0}, {"min_sd": 0.0},
    {"min_observations": 1}, {"min_observations": 70, "max_observations": 64},
])
def test_settings_that_cannot_work_are_refused(settings: dict) -> None:
    with pytest.raises(ValueError):
        SequentialTest(**settings)


def test_rounds_take_the_left_out_train_scenarios_then_copies_of_all() -> None:
    assert plan_rounds(["a", "b", "c", "d"], ["b", "d"], 2) == [
        ["a", "c"], ["a~r1", "b~r1", "c~r1", "d~r1"], ["a~r2", "b~r2", "c~r2", "d~r2"]]
    assert plan_rounds(["a", "b"], ["a", "b"], 1) == [["a~r1", "b~r1"]]


class FakeEvaluator:
    """Scores a candidate on a scenario from a table; records every call and
    caches every pair, as the run's evaluator does (its cache is what the
    run's budget counts)."""

    def __init__(self, scores: dict[tuple[str, str], float]) -> None:
        self.scores = scores
        self.calls: list[tuple[str, list[str]]] = []
        self.cached: set[tuple[str, str]] = set()

    def evaluate_many(self, source: str, examples: list, workers: int | None = None) -> list:
        self.calls.append((source, [e.name for e in examples]))
        self.cached |= {(source, e.name) for e in examples}
        return [SimpleNamespace(score=self.scores.get((source, e.name), 0.0)) for e in examples]

    def uncached(self, source: str, examples: list) -> int:
        return sum((source, e.name) not in self.cached for e in examples)


def test_evidence_is_evaluated_a_round_at_a_time_within_the_allowance(tmp_path: Path) -> None:
    from repo_files import REPO

    from routesim_evolve.corpus.examples import load_examples

    train = load_examples(REPO / "corpus", "train")[:4]
    names = [e.name for e in train]
    scores = {("child", n): 0.1 for n in names} | {("child", f"{n}~r1"): 0.2 for n in names}
    fake = FakeEvaluator(scores)
    left, notes = [12], []
    evidence = TrainEvidence(train, fake, tmp_path, copies=3, allowance=lambda: left[0],
                             on_round=notes.append)
    rounds = evidence.rounds("parent", "child", names[:2])
    assert fake.calls == []  # nothing is evaluated before it is asked for
    assert next(rounds) == pytest.approx([0.1, 0.1])
    assert fake.calls == [("parent", names[2:]), ("child", names[2:])]
    assert next(rounds) == pytest.approx([0.2] * 4)
    assert notes == [f"judging a child: {n} train scenarios so far" for n in (4, 8)]
    left[0] = 7  # the next round would cost 8 evaluations
    assert next(rounds, None) is None


def test_a_resumed_decision_draws_the_rounds_the_killed_one_would_have(tmp_path: Path) -> None:
    """A run killed in the middle of a decision has spent (and cached) the
    rounds it drew; resumed, it judges the same child again. Those rounds
    cost nothing the second time, so they must not count against what is
    left, or the resumed decision stops short of the uninterrupted one."""
    from repo_files import REPO

    from routesim_evolve.corpus.examples import load_examples

    train = load_examples(REPO / "corpus", "train")[:4]
    names = [e.name for e in train]
    limit = 25  # pays the left-out pair (4) and two rounds of copies (8 + 8), not a third

    def drawn(fake: FakeEvaluator) -> int:
        evidence = TrainEvidence(train, fake, tmp_path, copies=3,
                                 allowance=lambda: limit - len(fake.cached))
        return sum(1 for _ in evidence.rounds("parent", "child", names[:2]))

    whole = FakeEvaluator({})
    assert drawn(whole) == 3
    killed = FakeEvaluator({})
    killed.cached = set(whole.cached)  # every round evaluated, then killed before deciding
    assert drawn(killed) == 3
    assert killed.cached == whole.cached  # and nothing more was spent


def test_the_rule_plays_the_child_against_its_parent_from_the_state() -> None:
    rule = acceptance_rule("sequential")
    assert isinstance(rule, SequentialAcceptance) and isinstance(rule, DrawsEvidence)
    seen = []

    class Evidence:
        def rounds(self, parent: str, child: str, minibatch: list[str]) -> Iterator[list[float]]:
            seen.append((parent, child, minibatch))
            while True:
                yield [0.03, 0.02, 0.04, 0.03, 0.02]

    rule.attach(Evidence())  # type: ignore[arg-type]
    proposal = SimpleNamespace(
        candidate={"router.go": "child"}, parent_program_ids=[1],
        subsample_scores_before=[0.5, 0.5, 0.5], subsample_scores_after=[0.53, 0.53, 0.53],
        eval_before=SimpleNamespace(trajectories=[info(0.5, f"s{i}") for i in range(3)]),
        eval_after=SimpleNamespace(trajectories=[info(0.53, f"s{i}") for i in range(3)]))
    state = SimpleNamespace(program_candidates=[{"router.go": "seed"}, {"router.go": "parent"}])
    assert rule.should_accept(proposal, state) is True
    assert seen == [("parent", "child", ["s0", "s1", "s2"])]
    reason = rule.reject_reason(proposal, state)
    assert reason.startswith("minibatch sum 1.5000 → 1.5900")
    assert "over 8 scenario evaluations, accepted" in reason
    assert len(seen) == 1  # the account does not judge again
    assert rule.last_decision is not None and rule.last_decision.observations == 8
    # What the prompt tells a model given this child as its parent.
    assert rule.account_of("child") == rule.last_decision.account()
    assert rule.account_of("another") is None
