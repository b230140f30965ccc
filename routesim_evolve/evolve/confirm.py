"""The best is confirmed on reseeded val copies before it is named.

GEPA names the candidate with the highest mean val score. The search chose
among many candidates by those very scores, so the highest is partly the
luckiest on those few worlds. Before naming it, the CONTENDERS best by val
are scored on a reseeded copy of every val scenario (the same graph,
payments and settings, other draws: corpus/examples.py `reseeded`; hidden
as the run's own worlds are, since they copy them). The val best keeps its
place unless the contender with the highest mean over both beats it, paired
scenario by scenario over both, with a t of at least SWITCH_T: two
candidates a hair apart stay as val ranked them. This costs CONTENDERS ×
|val| evaluations beyond the budget; the run says when it changed the
choice.

`confirm_best` is the run's confirmation rule (rules.py `ConfirmationRule`,
registry.py "reseeded").
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from routesim_evolve.corpus.examples import ScenarioExample, reseeded
from routesim_evolve.evolve.acceptance import paired_t
from routesim_evolve.score.evaluator import Evaluator

#: How many of the best by val are scored again on reseeded copies.
CONTENDERS = 3
#: The paired t over val and its copies a contender needs to displace the
#: val best.
SWITCH_T = 2.0


class Contender(BaseModel):
    """A candidate's mean val score and its mean on the reseeded copies."""

    index: int
    val: float
    reseeded: float
    #: Its score on each val scenario, then on each reseeded copy.
    scores: list[float] = []

    @property
    def both(self) -> float:
        return (self.val + self.reseeded) / 2


class Confirmation(BaseModel):
    """Who GEPA would name, who is named, and the contenders' scores."""

    val_best: int
    named: int
    contenders: list[Contender]
    evaluations: int

    def note(self) -> str:
        """One line for the run's log and report."""
        seen = ", ".join(f"#{c.index} val {c.val:.4f} reseeded {c.reseeded:.4f}"
                         for c in self.contenders)
        if self.named == self.val_best:
            return f"best confirmed on reseeded val copies ({seen})"
        return (f"best by val (#{self.val_best}) did not hold on reseeded val copies; "
                f"#{self.named} beats it over both and is named best ({seen})")

    def notes(self) -> list[str]:
        """The run's line, when there were contenders to confirm."""
        return [self.note()] if self.contenders else []


def confirm_best(
    candidates: Sequence[str],
    val_scores: Sequence[Sequence[float]],
    val: Sequence[ScenarioExample],
    evaluator: Evaluator,
    *,
    workers: int | None = None,
) -> Confirmation:
    """Score the CONTENDERS best by mean val score (`val_scores[i]`: each
    val scenario's, in `val`'s order) on reseeded copies of `val`; name the
    val best unless another clearly beats it over both."""
    means = [sum(v) / len(v) for v in val_scores]
    ranked = sorted(range(len(candidates)), key=lambda i: (-means[i], i))
    chosen = _distinct(ranked, candidates)[:CONTENDERS]
    if len(chosen) < 2:
        return Confirmation(val_best=ranked[0], named=ranked[0], contenders=[], evaluations=0)
    with tempfile.TemporaryDirectory(prefix="routesim-confirm-") as tmp:
        copies = reseeded(val, 1, Path(tmp))[len(val):]
        contenders = []
        for i in chosen:
            evals = evaluator.evaluate_many(candidates[i], copies, workers=workers)
            mean = sum(e.score for e in evals) / len(evals)
            contenders.append(Contender(index=i, val=means[i], reseeded=mean,
                                        scores=[*val_scores[i], *(e.score for e in evals)]))
    leader, challenger = contenders[0], max(contenders, key=lambda c: (c.both, -c.index))
    diffs = [b - a for a, b in zip(leader.scores, challenger.scores, strict=True)]
    named = challenger.index if paired_t(diffs) >= SWITCH_T else leader.index
    return Confirmation(val_best=ranked[0], named=named, contenders=contenders,
                        evaluations=len(chosen) * len(val))


def _distinct(ranked: Sequence[int], candidates: Sequence[str]) -> list[int]:
    """The ranked indices, a candidate whose text came earlier left out."""
    seen: set[str] = set()
    out = []
    for i in ranked:
        if candidates[i] not in seen:
            seen.add(candidates[i])
            out.append(i)
    return out
