"""What every proposer is: a parent and its feedback in, a child out, and
the hooks through which the dispatcher tells it how its proposals fared."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from routesim_evolve.reflect.base import PromptParts
from routesim_evolve.reflect.prompts import HandIn, PromptPack
from routesim_evolve.score.feedback import ScenarioFeedback

if TYPE_CHECKING:
    from routesim_evolve.propose.eval_service import MinibatchEvaluations


class Proposer:
    """Turns a parent candidate and its minibatch feedback into a child.

    Subclasses implement `propose`; the hooks do nothing unless overridden.
    """

    name: str = "proposer"

    def propose(self, parent: str, feedback: Sequence[ScenarioFeedback]) -> str | None:
        """The child's whole source, or None to skip this proposal. A
        proposal that fails for a reason outside the proposer (the LM gave
        up, no usable file) raises `ProposalFailed`; anything else is a bug
        and ends the run."""
        raise NotImplementedError

    def exhausted(self) -> str | None:
        """Why this proposer has nothing left worth evaluating, or None
        while it has. A run whose proposers are all exhausted stops."""
        return None

    def snapshot(self) -> dict[str, Any]:
        """What this proposer has learned, as plain picklable data, so that a
        resumed run goes on where it stopped."""
        return {}

    def restore(self, snapshot: dict[str, Any]) -> None:
        """Take back a snapshot."""

    def attach_evaluations(self, evaluations: MinibatchEvaluations) -> None:
        """The run's scorer of files on named train scenarios, for a
        proposer that lets its model score its own edits (an agent)."""

    def attach_acceptance(self, account_of: Callable[[str], str | None]) -> None:
        """What the run's acceptance saw of a candidate it judged (its gain,
        interval and evaluations), by source: a prompted proposer tells its
        model of the parent's (evolve/sequential.py)."""

    def on_unchanged(self, note: str) -> None:
        """Its last proposal was not evaluated: it repeated its parent or a
        candidate already evaluated (`note` says which)."""

    def on_candidate_accepted(self, event: Mapping[str, Any]) -> None:
        """GEPA kept its last proposal (better on the minibatch)."""

    def on_candidate_rejected(self, event: Mapping[str, Any]) -> None:
        """GEPA dropped its last proposal; `event` has old_score and new_score."""


class PromptedProposer(Proposer):
    """A proposer that renders the prompt pack for a model. When its last
    reply repeated a candidate, the next prompt says so, once; and every
    prompt lists its recent proposals, each in the model's own words with how
    it fared (its memory: a model sees no earlier conversation)."""

    #: How its model hands a proposal in (prompts.HAND_IN).
    hand_in: HandIn = "reply"

    def __init__(self, pack: PromptPack) -> None:
        self.pack = pack
        self._note: str | None = None
        self._memory: list[Recalled] = []
        self._account_of: Callable[[str], str | None] = lambda _source: None

    def attach_acceptance(self, account_of: Callable[[str], str | None]) -> None:
        self._account_of = account_of

    def prompt(self, parent: str, feedback: Sequence[ScenarioFeedback]) -> PromptParts:
        """The prompt for this proposal, with the pending note (then cleared)."""
        note, self._note = self._note, None
        return self.pack.render(parent, feedback, note=note, hand_in=self.hand_in,
                                history=[r.line() for r in self._memory],
                                parent_seen=self._account_of(parent))

    def remember(self, summary: str) -> None:
        """Keep a proposal just made, its outcome to come (the hooks below)."""
        self._memory = [*self._memory, Recalled(summary=summary)][-MEMORY:]

    def _outcome(self, outcome: str) -> None:
        if self._memory and self._memory[-1].outcome is None:
            self._memory[-1] = self._memory[-1].model_copy(update={"outcome": outcome})

    def on_unchanged(self, note: str) -> None:
        self._note = note
        self._outcome(f"not evaluated ({note})")

    def on_candidate_accepted(self, event: Mapping[str, Any]) -> None:
        said = _rules_account(event)
        self._outcome(f"accepted: {said}; then scored on val" if said else
                      f"accepted: minibatch sum {float(event.get('new_score', 0.0)):.4f}, "
                      "then scored on val")

    def on_candidate_rejected(self, event: Mapping[str, Any]) -> None:
        said = _rules_account(event) or (f"minibatch sum {float(event.get('old_score', 0.0)):.4f}"
                                         f" → {float(event.get('new_score', 0.0)):.4f}")
        self._outcome(f"rejected: {said}")

    def snapshot(self) -> dict[str, Any]:
        return {"note": self._note, "memory": [r.model_dump() for r in self._memory]}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._note = snapshot["note"]
        self._memory = [Recalled.model_validate(r) for r in snapshot.get("memory", [])]


#: The recent proposals a prompt lists.
MEMORY = 6


def _rules_account(event: Mapping[str, Any]) -> str | None:
    """The run's acceptance rule's account of a proposal (the sums, each
    axis's change and its paired test: evolve/acceptance.py), when the event
    carries one; GEPA's own events give only the sums."""
    reason = str(event.get("reason") or "")
    return reason if reason.startswith("minibatch sum") else None


class Recalled(BaseModel):
    """One proposal as the next prompts recall it."""

    summary: str
    outcome: str | None = None

    def line(self) -> str:
        said = self.summary or "(no summary given)"
        return f"{said} — {self.outcome or 'not evaluated yet'}"
