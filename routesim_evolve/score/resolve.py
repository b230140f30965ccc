"""A held-out comparison played until it resolves what it reports.

One draw of the test split's worlds is a small sample: on the bundled corpus
a comparison of 32 scenarios detects about ±0.07, so "not shown better" may
only mean "not measured finely enough". Hidden worlds can be drawn again at
will (corpus/examples.py `reseeded`, under the run's secret), so this plays
reseeded copies of every test scenario until each comparison of the focus
router (the run's best: against its parent, the seed and the production
routers) could detect `target` (its `detectable`, 80 % power at 95 %), or
until the evaluations it may spend run out, and says which.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from routesim_evolve.corpus.examples import ScenarioExample
from routesim_evolve.score.compare import Comparison, compare_routers
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults

#: The difference the closing table should be able to detect (issue 44):
#: the size of the gains the search makes near champion level.
TARGET = 0.02


class Resolution(BaseModel):
    """How many draws the comparison took and what it can detect."""

    model_config = ConfigDict(frozen=True)

    draws: int
    scenarios: int
    #: The widest `detectable` of the focus router's comparisons.
    detectable: float | None
    target: float
    #: Candidate evaluations it may spend, and what the draws took.
    allowed: int
    evaluations: int
    cpu_s: float

    def note(self) -> str:
        """One line for the run's output and report."""
        played = (f"held-out test: {self.draws} draw{'s' if self.draws > 1 else ''} of "
                  f"{self.scenarios} scenarios ({self.evaluations} candidate evaluations of "
                  f"{self.allowed} allowed, {self.cpu_s:.0f} CPU s with the references)")
        if self.detectable is None:
            return f"{played}."
        if self.detectable <= self.target:
            return (f"{played}: every comparison of the best detects ±{self.detectable:.3f} "
                    f"or finer (asked ±{self.target:.2f}).")
        return (f"{played}: the widest comparison of the best detects only "
                f"±{self.detectable:.3f}, not the ±{self.target:.2f} asked; more evaluations "
                "(--held-out-evals) would resolve finer differences.")


def compare_until_resolved(
    candidates: Mapping[str, str], examples: Sequence[ScenarioExample], evaluator: Evaluator,
    references: ReferenceResults, *, focus: str, allowed: int, target: float = TARGET,
    workers: int | None = None,
) -> tuple[Comparison, Resolution]:
    """`compare_routers` on one draw, then on as many draws as the focus's
    widest comparison needs to detect `target` (by the square-root law from
    what one draw detected), within `allowed` candidate evaluations."""
    start = cpu_seconds()
    per_draw = len(candidates) * len(examples)
    draws = 1
    while True:
        comparison = compare_routers(candidates, examples, evaluator, references,
                                     workers=workers, revalidate=draws - 1)
        widest = _widest(comparison, focus)
        if widest is None or widest <= target:
            break
        wanted = math.ceil(draws * (widest / target) ** 2)
        nxt = min(wanted, max(1, allowed // per_draw))
        if nxt <= draws:
            break
        draws = nxt
    return comparison, Resolution(draws=draws, scenarios=len(examples), detectable=widest,
                                  target=target, allowed=allowed,
                                  evaluations=draws * per_draw, cpu_s=cpu_seconds() - start)


def cpu_seconds() -> float:
    """CPU seconds this process and its finished children (the simulator
    runs) have used: the difference of two readings is what work between
    them cost."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def _widest(comparison: Comparison, focus: str) -> float | None:
    """The coarsest `detectable` among the focus router's comparisons."""
    found = [p.detectable for p in comparison.pairs
             if focus in (p.a, p.b) and p.detectable is not None]
    return max(found) if found else None
