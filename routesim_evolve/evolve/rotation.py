"""The proposal dispatcher GEPA calls, with adaptive rotation.

GEPA hands every proposal to `custom_candidate_proposer`; the dispatcher
passes it to the current proposer (offline knob search, a reflection LM, an
agentic CLI), turns a failed proposal into a skipped iteration (an empty
dict) instead of a dead run, and — with adaptive rotation — moves on to the
next proposer when the best validation score has not improved for
`plateau_evals` metric calls. All proposers draw from GEPA's one budget.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

log = logging.getLogger(__name__)


class Proposer(Protocol):
    """Something that turns a parent candidate and its feedback into a child."""

    name: str

    def propose(self, parent: str, feedback: Sequence[Mapping[str, Any]]) -> str | None:
        """The child's whole source, or None to skip this proposal."""
        ...


class RotatingProposer:
    """GEPA's ProposalFn and a GEPACallback (it watches the budget and the
    validation scores to decide when to rotate)."""

    def __init__(
        self, proposers: Sequence[Proposer], *, adaptive: bool = True, plateau_evals: int = 40
    ) -> None:
        if not proposers:
            raise ValueError("at least one proposer is needed")
        self.proposers = list(proposers)
        self.adaptive = adaptive
        self.plateau_evals = plateau_evals
        self.index = 0
        self.best_val: float | None = None
        self.calls_at_best = 0
        self.calls_used = 0
        self.rotations: list[tuple[int, str]] = []
        self.skipped = 0
        # The proposer of the last proposal: GEPA's verdict on it may arrive
        # after a rotation.
        self._last_proposer: Proposer | None = None

    @property
    def current(self) -> Proposer:
        return self.proposers[self.index]

    def __call__(
        self,
        candidate: dict[str, str],
        reflective_dataset: Mapping[str, Sequence[Mapping[str, Any]]],
        components_to_update: list[str],
    ) -> dict[str, str]:
        out: dict[str, str] = {}
        self._last_proposer = self.current
        for component in components_to_update:
            parent = candidate[component]
            try:
                child = self.current.propose(parent, reflective_dataset.get(component, ()))
            except Exception as exc:  # a proposer's failure costs an iteration, not the run
                log.warning("proposer %s failed: %s", self.current.name, exc)
                child = None
            if child is not None and child.strip() and child != parent:
                out[component] = child
        if not out:
            self.skipped += 1
        return out

    # GEPACallback hooks -------------------------------------------------

    def on_candidate_accepted(self, event: Mapping[str, Any]) -> None:
        self._forward("on_candidate_accepted", event)

    def on_candidate_rejected(self, event: Mapping[str, Any]) -> None:
        self._forward("on_candidate_rejected", event)

    def _forward(self, hook: str, event: Mapping[str, Any]) -> None:
        """Tell the proposer that made the last proposal how it fared."""
        method = getattr(self._last_proposer, hook, None)
        if method is not None:
            method(event)

    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        score = float(event["average_score"])
        if self.best_val is None or score > self.best_val:
            self.best_val = score
            self.calls_at_best = self.calls_used

    def on_budget_updated(self, event: Mapping[str, Any]) -> None:
        self.calls_used = int(event["metric_calls_used"])
        stalled = self.calls_used - self.calls_at_best >= self.plateau_evals
        if self.adaptive and len(self.proposers) > 1 and stalled:
            self.index = (self.index + 1) % len(self.proposers)
            self.calls_at_best = self.calls_used  # give the new proposer a full window
            self.rotations.append((self.calls_used, self.current.name))
            log.info("no val improvement in %d evals: rotating to %s",
                     self.plateau_evals, self.current.name)
