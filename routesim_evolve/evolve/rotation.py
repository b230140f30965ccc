"""The proposal dispatcher GEPA calls, with adaptive rotation.

GEPA hands every proposal to `custom_candidate_proposer`; the dispatcher
turns GEPA's reflective dataset into typed feedback, passes it to the
current proposer (offline knob search, a reflection LM, an agentic CLI),
turns a failed proposal (`ProposalFailed`) into a skipped iteration (an
empty dict) instead of a dead run, and drops a child that repeats its parent or any
candidate already evaluated, telling the proposer so: GEPA never spends an
evaluation on it. With adaptive rotation it moves on to the next proposer
when the best validation score has not improved for `plateau_evals` metric
calls, and at once when the current proposer has nothing left to try. All
proposers draw from the run's one budget.

A proposer whose replies keep repeating a candidate already evaluated (a
model answering with its parent however it is told) is rotated away from
after REPEATS_PER_PROPOSER such replies in a row, and such replies end the
run once every proposer has had that many in a row: each costs a request
and no evaluation, so nothing else would stop them.

Three things end the run instead (`fatal`, which the driver's stop callback
watches and raises once GEPA has stopped): repeats as above, proposals failing several times
in a row (a few permanent failures, such as a refused key or an unknown
model, after which every iteration would fail the same way; or a longer run
of failures of any kind, each already retried by its back-end, such as an
agent that cannot reach its service: waiting hours for it helps nobody, and
the run resumes where it stopped), and any other exception, which is a bug
in a proposer and must not be hidden as skipped iterations.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from routesim_evolve.propose.base import Proposer
from routesim_evolve.reflect.errors import ProposalFailed
from routesim_evolve.score.feedback import ScenarioFeedback

log = logging.getLogger(__name__)

#: Permanent proposal failures in a row that stop the run.
MAX_PERMANENT_FAILURES = 3
#: Failed proposals of any kind in a row (each after its back-end's own
#: retries) that stop the run.
MAX_FAILURES_IN_A_ROW = 6
#: Replies in a row repeating an evaluated candidate after which the
#: dispatcher rotates to the next proposer; every proposer's worth ends the
#: run.
REPEATS_PER_PROPOSER = 4


class ProposalsKeepFailing(RuntimeError):
    """Proposals failed several times in a row for a reason waiting will
    not fix; the message names the proposer and the last reason."""


class RotatingProposer:
    """GEPA's ProposalFn and a GEPACallback (it watches the budget and the
    validation scores to decide when to rotate)."""

    def __init__(
        self,
        proposers: Sequence[Proposer],
        *,
        adaptive: bool = True,
        plateau_evals: int = 40,
        spent: Callable[[], int] | None = None,
        verdict: Callable[[], str] | None = None,
    ) -> None:
        if not proposers:
            raise ValueError("at least one proposer is needed")
        self.proposers = list(proposers)
        self.adaptive = adaptive
        self.plateau_evals = plateau_evals
        # The run's own count of metric calls; without it, GEPA's.
        self._spent = spent
        # The acceptance rule's account of the last proposal it judged.
        self._verdict = verdict
        self.index = 0
        self.best_val: float | None = None
        self.calls_at_best = 0
        self.calls_used = 0
        self.rotations: list[tuple[int, str]] = []
        self.skipped = 0
        self.unchanged = 0
        self.permanent_failures = 0  # in a row
        self.failures = 0  # of any kind, in a row
        self.repeats = 0  # replies repeating an evaluated candidate, in a row
        # What ends the run: see the module doc.
        self.fatal: BaseException | None = None
        self._seen: set[str] = set()  # digests of every candidate evaluated or proposed
        # The proposer of the last proposal: GEPA's verdict on it may arrive
        # after a rotation.
        self._last_proposer: Proposer | None = None

    @property
    def current(self) -> Proposer:
        return self.proposers[self.index]

    def exhausted(self) -> str | None:
        """Why no proposer has anything left to try, or None."""
        reasons = [p.exhausted() for p in self.proposers]
        if any(r is None for r in reasons):
            return None
        return "; ".join(f"{p.name}: {r}" for p, r in zip(self.proposers, reasons, strict=True))

    def __call__(
        self,
        candidate: dict[str, str],
        reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
        components_to_update: list[str],
    ) -> dict[str, str]:
        self._leave_exhausted()
        proposer = self._last_proposer = self.current
        out: dict[str, str] = {}
        for component in components_to_update:
            parent = candidate[component]
            self._seen.add(_digest(parent))
            feedback = [
                ScenarioFeedback.from_side_info(e) for e in reflective_dataset.get(component, ())
            ]
            child = self._propose(proposer, parent, feedback)
            if child is None or not child.strip():
                continue
            if _digest(child) in self._seen:
                self.unchanged += 1
                proposer.on_unchanged(
                    "your previous reply was identical to the candidate it was asked to improve"
                    if child == parent
                    else "your previous reply repeated a candidate that was already evaluated"
                )
                self._repeated(proposer)
                continue
            self._seen.add(_digest(child))
            out[component] = child
            self.repeats = self.permanent_failures = self.failures = 0
        if not out:
            self.skipped += 1
        return out

    def _repeated(self, proposer: Proposer) -> None:
        """Count a reply that repeats an evaluated candidate: rotate after
        REPEATS_PER_PROPOSER in a row, end the run after every proposer's."""
        self.repeats += 1
        if self.repeats >= REPEATS_PER_PROPOSER * len(self.proposers):
            self.fatal = ProposalsKeepFailing(
                f"{self.repeats} replies in a row repeated a candidate already evaluated (the "
                f"last from {proposer.name}): the model keeps answering with its parent or an "
                "earlier candidate, which costs a request each and teaches the search nothing. "
                "Try another model or prompt pack"
            )
        elif self.repeats % REPEATS_PER_PROPOSER == 0 and len(self.proposers) > 1:
            self._rotate(f"{REPEATS_PER_PROPOSER} repeated replies in a row")

    def _propose(
        self, proposer: Proposer, parent: str, feedback: list[ScenarioFeedback]
    ) -> str | None:
        """The proposer's child; a failed proposal costs an iteration, a
        run of permanent ones or a bug ends the run."""
        try:
            child = proposer.propose(parent, feedback)
        except ProposalFailed as exc:
            log.warning("proposer %s failed: %s", proposer.name, exc.reason)
            self.permanent_failures = self.permanent_failures + 1 if exc.permanent else 0
            self.failures += 1
            if self.permanent_failures >= MAX_PERMANENT_FAILURES:
                self.fatal = ProposalsKeepFailing(
                    f"{self.permanent_failures} proposals in a row failed for a reason that "
                    f"waiting will not fix; the last, from {proposer.name}: {exc.reason}"
                )
            elif self.failures >= MAX_FAILURES_IN_A_ROW:
                self.fatal = ProposalsKeepFailing(
                    f"{self.failures} proposals in a row failed, each after its retries; "
                    f"the last, from {proposer.name}: {exc.reason}"
                )
            return None
        except Exception as exc:
            self.fatal = exc
            raise
        return child

    def snapshot(self) -> dict[str, Any]:
        """The dispatcher's and every proposer's state (see resume.py)."""
        return {
            "index": self.index, "best_val": self.best_val, "calls_at_best": self.calls_at_best,
            "rotations": list(self.rotations), "skipped": self.skipped,
            "unchanged": self.unchanged, "seen": sorted(self._seen),
            "proposers": [p.snapshot() for p in self.proposers],
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        if len(snapshot["proposers"]) != len(self.proposers):
            raise ValueError("the run's proposers changed since it was saved")
        self.index, self.best_val = snapshot["index"], snapshot["best_val"]
        self.calls_at_best, self.rotations = snapshot["calls_at_best"], snapshot["rotations"]
        self.skipped, self.unchanged = snapshot["skipped"], snapshot["unchanged"]
        self._seen = set(snapshot["seen"])
        for proposer, snap in zip(self.proposers, snapshot["proposers"], strict=True):
            proposer.restore(snap)

    def _leave_exhausted(self) -> None:
        """Rotate away from a proposer with nothing left, if another has."""
        for _ in range(len(self.proposers)):
            if self.current.exhausted() is None:
                return
            self._rotate("nothing left to try")

    def _rotate(self, why: str) -> None:
        self.index = (self.index + 1) % len(self.proposers)
        self.calls_at_best = self.calls_used  # give the new proposer a full window
        self.rotations.append((self.calls_used, self.current.name))
        log.info("%s: rotating to %s", why, self.current.name)

    # GEPACallback hooks -------------------------------------------------

    def on_optimization_start(self, event: Mapping[str, Any]) -> None:
        seed = event["seed_candidate"]
        for text in seed.values() if isinstance(seed, Mapping) else [seed]:
            self._seen.add(_digest(text))

    def on_candidate_accepted(self, event: Mapping[str, Any]) -> None:
        if self._last_proposer is not None:
            # GEPA's accepted event has no reason: the acceptance rule's
            # account of what moved goes with it.
            reason = self._verdict() if self._verdict is not None else ""
            self._last_proposer.on_candidate_accepted({**event, "reason": reason})

    def on_candidate_rejected(self, event: Mapping[str, Any]) -> None:
        if self._last_proposer is not None:
            self._last_proposer.on_candidate_rejected(event)

    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        score = float(event["average_score"])
        if self.best_val is None or score > self.best_val:
            self.best_val = score
            self.calls_at_best = self.calls_used

    def on_budget_updated(self, event: Mapping[str, Any]) -> None:
        self.calls_used = self._spent() if self._spent else int(event["metric_calls_used"])
        stalled = self.calls_used - self.calls_at_best >= self.plateau_evals
        if self.adaptive and len(self.proposers) > 1 and stalled:
            self._rotate(f"no val improvement in {self.plateau_evals} evals")


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()
