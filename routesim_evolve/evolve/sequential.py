"""Sequential acceptance: a child is evaluated until the evidence decides.

A proposal costs an LM reply; an evaluation about half a second of CPU. The
minibatch's three scenarios cannot tell a gain of +0.01 from noise, so a
child that the minibatch does not already reject is evaluated on more: the
train scenarios the minibatch left out, then reseeded copies of every train
scenario (other hidden draws under the run's secret: corpus/examples.py
`reseeded`), a round at a time, parent and child on the same worlds, until
a sequential test decides or the cap is reached (docs/search.md).

The observation is one scenario's paired difference: the child's score minus
its parent's, which is the sum of the payments' share differences
(score/axes.py `payment_shares`), so the payments of one scenario count as
one cluster. The test is Wald's sequential probability ratio test between
"no gain" (H0: mean 0) and "the gain worth keeping" (H1: mean `gain`) with
the variance estimated from the observations, the generalized SPRT chess
engine testers run (fishtest): after n observations of mean m and variance
s², the log-likelihood ratio is n·gain·(m − gain/2) / s². It accepts when
that reaches log((1 − β) / α) and rejects when it falls to log(β / (1 − α)):
a child that is not better is kept with probability at most about α, one
that gains `gain` or more with probability at least about 1 − β, however
many times the test looked, which is what a plain t checked after every
round cannot say. The estimated variance and rounds (which look less often)
make these "about": bench/bench_acceptance.py measures the real rates.

Why an SPRT and not group-sequential bounds or racing: the SPRT needs the
fewest observations on average at both hypotheses, looks after any round
without a schedule fixed in advance, and names the indifference zone (gains
between 0 and `gain` are kept sometimes); racing (F-Race, irace) drops the
worst of many candidates at once, where here one child meets one parent.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from routesim_evolve.evolve.acceptance import scenario_differences
from routesim_evolve.evolve.evidence import TrainEvidence
from routesim_evolve.evolve.rules import SideInfo, minibatch_sums, sums_account
from routesim_evolve.evolve.runlog import candidate_text
from routesim_evolve.score.evaluator import candidate_hash
from routesim_evolve.score.feedback import ScenarioFeedback
from routesim_evolve.score.stats import mean_t_interval

#: The gain in mean scenario score a child must be likely to have to be
#: kept: the small gains the search makes near champion level (issue 44).
GAIN = 0.01
#: The largest false acceptance the test aims at (a child not better kept).
ALPHA = 0.05
#: The largest miss the test aims at for a child gaining GAIN (power 1 − β).
BETA = 0.2
#: No child is kept on fewer observations, and none refused unless clearly
#: worse: a variance from three scenarios can be near 0 by chance, and a
#: child that ties its parent on the minibatch may gain elsewhere.
MIN_OBSERVATIONS = 8
#: At most this many observations per child, the minibatch's included;
#: a child still undecided then is refused. Scenario differences of a
#: knob move have a standard deviation of about 0.025 (bench_acceptance.py);
#: at 64 a third of the children gaining +0.01 were still undecided.
MAX_OBSERVATIONS = 128
#: The least standard deviation of a scenario's difference the test
#: assumes: a child that plays like its parent (every difference 0) is then
#: refused at the least observations instead of dividing by zero.
MIN_SD = 0.005


class Decision(BaseModel):
    """What the sequential test decided for one child, and on what."""

    model_config = ConfigDict(frozen=True)

    kept: bool
    #: "accepted", "rejected", or "capped" (undecided at the cap: refused).
    outcome: str
    #: How many scenario differences it looked at, the minibatch's included.
    observations: int
    #: The mean difference and its 95 % t interval (a plain interval: a
    #: test that stops when the evidence is strong leans it outward).
    gain: float
    low: float
    high: float
    llr: float

    def account(self) -> str:
        """The words a log, a report and the proposer's memory use."""
        return (f"gain {self.gain:+.4f} [{self.low:+.4f}, {self.high:+.4f}] over "
                f"{self.observations} scenario evaluations, {self.outcome}")


class SequentialTest(BaseModel):
    """The test's settings, validated once; `decide` runs it."""

    model_config = ConfigDict(frozen=True)

    gain: float = GAIN
    alpha: float = ALPHA
    beta: float = BETA
    min_observations: int = MIN_OBSERVATIONS
    max_observations: int = MAX_OBSERVATIONS
    min_sd: float = MIN_SD

    def model_post_init(self, _: object) -> None:
        if not (0 < self.alpha < 0.5 and 0 < self.beta < 0.5):
            raise ValueError("alpha and beta must lie between 0 and 0.5")
        if self.gain <= 0 or self.min_sd <= 0:
            raise ValueError("gain and min_sd must be positive")
        if not 2 <= self.min_observations <= self.max_observations:
            raise ValueError("need 2 <= min_observations <= max_observations")

    @property
    def upper(self) -> float:
        """The log-likelihood ratio that keeps a child."""
        return math.log((1 - self.beta) / self.alpha)

    @property
    def lower(self) -> float:
        """The log-likelihood ratio that refuses a child."""
        return math.log(self.beta / (1 - self.alpha))

    def llr(self, diffs: Sequence[float]) -> float:
        """log P(diffs | gain) / P(diffs | 0) under a normal model with the
        variance estimated from the diffs (floored at min_sd²)."""
        n = len(diffs)
        if n == 0:
            return 0.0
        mean = sum(diffs) / n
        var = max(statistics.variance(diffs) if n > 1 else 0.0, self.min_sd ** 2)
        return n * self.gain * (mean - self.gain / 2) / var

    def decide(self, first: Sequence[float], more: Iterable[Sequence[float]] = ()) -> Decision:
        """Look at `first` (the minibatch's differences), then at each round
        `more` yields, until the ratio crosses a bound or the cap is reached.
        Rounds are drawn lazily: a round not needed is never evaluated."""
        diffs = list(first)[: self.max_observations]
        rounds: Iterator[Sequence[float]] = iter(more)
        while True:
            llr = self.llr(diffs)
            if llr <= self.lower and self._may_refuse(diffs):
                return self._decision(diffs, llr, "rejected")
            if llr >= self.upper and len(diffs) >= self.min_observations:
                return self._decision(diffs, llr, "accepted")
            if len(diffs) >= self.max_observations:
                return self._decision(diffs, llr, "capped")
            step = next(rounds, None)
            if step is None:  # nothing more to draw: as at the cap
                return self._decision(diffs, llr, "capped")
            diffs += list(step)[: self.max_observations - len(diffs)]

    def _may_refuse(self, diffs: Sequence[float]) -> bool:
        """Before the least observations only a child clearly worse is
        refused (its mean below 0): one that tied its parent on the
        minibatch may gain where the minibatch did not look (a change for
        one arena ties on the others), and a round shows it."""
        return len(diffs) >= self.min_observations or sum(diffs) < 0

    def _decision(self, diffs: Sequence[float], llr: float, outcome: str) -> Decision:
        gain, low, high = mean_t_interval(diffs)
        return Decision(kept=outcome == "accepted", outcome=outcome, observations=len(diffs),
                        gain=gain, low=low, high=high, llr=llr)


#: How many proposals' decisions the rule holds for their accounts: more
#: than GEPA judges in one batch.
_REMEMBERED = 32


class SequentialAcceptance:
    """The sequential rule (rules.py `AcceptanceRule`, registry.py
    "sequential"): the minibatch's differences first, then rounds of train
    evidence (`attach`) until `test` decides. Without evidence attached it
    has the minibatch alone, fewer observations than it keeps a child on."""

    def __init__(self, test: SequentialTest | None = None, **settings: float) -> None:
        self.test = test or SequentialTest(**settings)
        self.evidence: TrainEvidence | None = None
        self.last = ""
        #: The last proposal's decision: the run log records it.
        self.last_decision: Decision | None = None
        # The proposals judged lately, held so their ids stay theirs: GEPA
        # asks for a rejected one's account after judging its whole batch.
        self._decided: dict[int, tuple[Any, Decision]] = {}
        # Every child judged, by source hash: the prompt tells the model
        # what was seen of the parent it is given.
        self._accounts: dict[str, str] = {}

    def account_of(self, source: str) -> str | None:
        """The decision on a child it judged, in words, or None."""
        return self._accounts.get(candidate_hash(source))

    def attach(self, evidence: TrainEvidence) -> None:
        """Where further rounds come from (the driver's run evaluator)."""
        self.evidence = evidence

    def recall(self, decided: Iterable[tuple[str, Decision]]) -> None:
        """Decisions made before (a resumed run's log: child hash and
        decision), so the prompt still tells what was seen of them."""
        for child, decision in decided:
            self._accounts[child] = decision.account()

    def record(self) -> dict[str, Any] | None:
        """The last decision as the run log keeps it (judged.py reads it)."""
        if self.last_decision is None:
            return None
        return {**self.last_decision.model_dump(), "wanted": self.test.gain}

    def judge(self, before: Sequence[SideInfo], after: Sequence[SideInfo],
              more: Iterable[Sequence[float]] = ()) -> Decision:
        """The decision from the minibatch's side infos and further rounds."""
        return self.test.decide(scenario_differences(before, after), more)

    def keeps(self, before: Sequence[SideInfo], after: Sequence[SideInfo],
              old_sum: float, new_sum: float,
              more: Iterable[Sequence[float]] = ()) -> bool:
        return self.judge(before, after, more).kept

    def should_accept(self, proposal: Any, state: Any) -> bool:
        decision = self._decide(proposal, state)
        self.last = self.reject_reason(proposal, state)
        return decision.kept

    def reject_reason(self, proposal: Any, state: Any) -> str:
        decision = self._decide(proposal, state)
        return (f"{sums_account(*minibatch_sums(proposal))}; {decision.account()} "
                f"(kept when a sequential test finds a gain of {self.test.gain:+.3f} likelier "
                f"than none, aiming at {self.test.alpha:.0%} false acceptance)")

    def _decide(self, proposal: Any, state: Any) -> Decision:
        """Each proposal is judged once; its account is asked for again."""
        key = id(proposal)
        if key not in self._decided:
            if len(self._decided) >= _REMEMBERED:
                self._decided.pop(next(iter(self._decided)))
            self._decided[key] = (proposal, self._judge(proposal, state))
            self._accounts[candidate_hash(candidate_text(proposal.candidate))] = \
                self._decided[key][1].account()
        self.last_decision = self._decided[key][1]
        return self.last_decision

    def _judge(self, proposal: Any, state: Any) -> Decision:
        before, after = proposal.eval_before, proposal.eval_after
        if before is None or after is None or not before.trajectories \
                or not after.trajectories:
            old, new = minibatch_sums(proposal)
            return self.test.decide([new - old])  # nothing to pair: the sums alone
        more: Iterable[Sequence[float]] = ()
        if self.evidence is not None and proposal.parent_program_ids:
            parent = candidate_text(state.program_candidates[proposal.parent_program_ids[0]])
            names = [ScenarioFeedback.from_side_info(i).scenario for i in before.trajectories]
            more = self.evidence.rounds(parent, candidate_text(proposal.candidate), names)
        return self.judge(before.trajectories, after.trajectories, more)
