"""More evidence on a child than its minibatch: train scenarios and reseeded train worlds.

A sequential acceptance rule (sequential.py) draws rounds of paired scenario
differences until it can decide. Round 1 is the train scenarios the
minibatch left out; round k + 1 is reseeded copy k of every train scenario
(the same graph, payments and settings, other hidden draws: corpus/examples.py
`reseeded`, hidden as the run's worlds are). Parent and child play the same
worlds, so each difference is exact for its world. Every evaluation goes
through the run's evaluator, so its cache answers a parent met before and
the run's budget counts every one; a round the budget cannot pay (its pairs
the cache cannot answer) is not drawn.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from routesim_evolve.corpus.examples import RESEED_MARK, ScenarioExample, reseeded
from routesim_evolve.score.evaluator import Evaluator

#: Reseeded copies of the train split a child may be played on: with 8
#: train scenarios, the left-out ones and 15 rounds of copies reach the
#: sequential test's cap of 128 observations.
TRAIN_COPIES = 15


def plan_rounds(train: Sequence[str], minibatch: Sequence[str], copies: int) -> list[list[str]]:
    """The scenario names of each round after the minibatch, in order: the
    train scenarios it left out, then copy k of every train scenario."""
    drawn = set(minibatch)
    left = [name for name in train if name not in drawn]
    rounds = [left] if left else []
    rounds += [[f"{name}{RESEED_MARK}{k}" for name in train] for k in range(1, copies + 1)]
    return rounds


class TrainEvidence:
    """Rounds of a child's paired differences from its parent, evaluated on
    demand; `allowance` says how many evaluations the run may still spend
    on it (a round costing more is not drawn)."""

    def __init__(self, train: Sequence[ScenarioExample], evaluator: Evaluator, workdir: Path,
                 *, copies: int = TRAIN_COPIES, workers: int | None = None,
                 allowance: Callable[[], int] | None = None,
                 on_round: Callable[[str], None] | None = None) -> None:
        self._train = list(train)
        self._evaluator = evaluator
        self._workdir = workdir
        self._copies = copies
        self._workers = workers
        self._allowance = allowance
        # A decision can take minutes of rounds: the run's progress line
        # says so after each one instead of standing still.
        self._on_round = on_round or (lambda note: None)
        self._examples: dict[str, ScenarioExample] | None = None

    def rounds(self, parent: str, child: str, minibatch: Sequence[str]) -> Iterator[list[float]]:
        """Each round's differences (child's score minus parent's, scenario
        by scenario), evaluated only when the test asks for the round."""
        observed = len(minibatch)
        for names in plan_rounds([e.name for e in self._train], minibatch, self._copies):
            examples = [self._example(name) for name in names]
            if self._allowance is not None and self._cost(parent, child, examples) \
                    > self._allowance():
                return
            before = self._evaluator.evaluate_many(parent, examples, workers=self._workers)
            after = self._evaluator.evaluate_many(child, examples, workers=self._workers)
            observed += len(examples)
            self._on_round(f"judging a child: {observed} train scenarios so far")
            yield [b.score - a.score for a, b in zip(before, after, strict=True)]

    def _cost(self, parent: str, child: str, examples: Sequence[ScenarioExample]) -> int:
        """What a round adds to the budget: its pairs the cache cannot
        answer. A parent met before costs nothing, nor does a round a killed
        run drew before it was resumed: counted as spent already, counting
        it again would cut the resumed decision short of the one the
        uninterrupted run makes."""
        return (self._evaluator.uncached(parent, examples)
                + self._evaluator.uncached(child, examples))

    def _example(self, name: str) -> ScenarioExample:
        if self._examples is None:
            # Written once per run dir; the copies' content is the same each
            # time, so the evaluation cache answers them across a resume.
            every = reseeded(self._train, self._copies, self._workdir)
            self._examples = {e.name: e for e in every}
        return self._examples[name]
