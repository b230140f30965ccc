"""The two rules of the search a newcomer may replace, as the run needs them.

An acceptance rule decides which child is kept after its minibatch; a
confirmation rule decides which candidate of the pool is named best. The
driver, the benchmarks and the CLI know them only by these protocols and get
the concrete ones by name from registry.py; docs/search.md measures the
run's own (acceptance.py, confirm.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from gepa.core.state import GEPAState
from gepa.proposer.base import CandidateProposal
from gepa.strategies.acceptance import AcceptanceCriterion

from routesim_evolve.corpus.examples import ScenarioExample
from routesim_evolve.evolve.evidence import TrainEvidence
from routesim_evolve.score.evaluator import Evaluator

#: GEPA's side info of one scenario's evaluation (score/feedback.py
#: `ScenarioFeedback.side_info`).
SideInfo = Mapping[str, Any]


@runtime_checkable
class AcceptanceRule(AcceptanceCriterion, Protocol):
    """Which child is kept. GEPA calls `should_accept` once per proposal
    (its AcceptanceCriterion) and `reject_reason` for a child it drops; the
    run's log and the proposer's memory read the rule's account."""

    #: The account of the last proposal judged: the dispatcher hands it to
    #: the proposer with GEPA's accepted event, which carries no reason.
    last: str

    def reject_reason(self, proposal: CandidateProposal, state: GEPAState) -> str:
        """The rule's account of a proposal, beginning as `sums_account`
        words it (the proposer's memory recognises it by that): what it
        weighed and the bar it set, e.g. "it rose on k of n scenarios, kept
        from m"."""
        ...

    def keeps(self, before: Sequence[SideInfo], after: Sequence[SideInfo],
              old_sum: float, new_sum: float) -> bool:
        """The verdict from the minibatch's side infos (the parent's, then the
        child's, scenario by scenario) and summed scores alone: what a
        benchmark plays on every minibatch without a GEPA proposal."""
        ...


class Accounted(Protocol):
    """A decision that can say itself in words (sequential.py `Decision`)."""

    def account(self) -> str: ...


@runtime_checkable
class DrawsEvidence(Protocol):
    """An acceptance rule that evaluates a child beyond its minibatch
    (sequential.py): the driver attaches the run's train evidence."""

    def attach(self, evidence: TrainEvidence) -> None: ...

    def recall(self, decided: Iterable[tuple[str, Accounted]]) -> None:
        """What it decided before the run was resumed (child hash and
        decision, from the log), so `account_of` knows those children too."""
        ...

    def account_of(self, source: str) -> str | None:
        """What it decided of the child with this source, in words (the
        prompt tells the model of its parent's), or None."""
        ...

    def record(self) -> dict[str, Any] | None:
        """The last proposal's decision as the run log records it with the
        accepted or rejected event (judged.py reads it back)."""
        ...


class Confirmed(Protocol):
    """What a confirmation rule decided."""

    #: The index of the candidate named best.
    named: int

    def notes(self) -> list[str]:
        """What the run's output and report say of it (none when there was
        nothing to confirm)."""
        ...


class ConfirmationRule(Protocol):
    """Which candidate of the pool is named best, from every candidate's
    source and its score on each val scenario (in `val`'s order); it may
    score candidates again with `evaluator`, beyond the budget."""

    def __call__(self, candidates: Sequence[str], val_scores: Sequence[Sequence[float]],
                 val: Sequence[ScenarioExample], evaluator: Evaluator, *,
                 workers: int | None = None) -> Confirmed: ...


def minibatch_sums(proposal: CandidateProposal) -> tuple[float, float]:
    """The parent's and the child's scores summed over the minibatch."""
    return (sum(proposal.subsample_scores_before or []),
            sum(proposal.subsample_scores_after or []))


def sums_account(old: float, new: float) -> str:
    """How every rule's account begins: the minibatch's two sums."""
    return f"minibatch sum {old:.4f} → {new:.4f}"
