"""The offline proposer: evolution without a language model.

It turns the knobs a candidate marks (see tunables.py), one per proposal,
guided by the feedback: it picks the score axis on which the candidate
trails lnd the most on the minibatch, prefers the knobs tagged with that
axis, and learns which knobs and directions paid off. A move whose proposal
comes back as a parent was accepted by GEPA; the proposer then pushes the
same knob the same way with a larger step, and otherwise shrinks the step
and tries the other direction next time. Everything is drawn from one
seeded RNG, so a run is reproducible.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from routesim_evolve.propose.tunables import Axis, Tunable, find_tunables, set_value

AXES: tuple[Axis, ...] = ("success", "retry_efficiency", "fee_efficiency")

# Step sizes in log space: the first move of a knob changes it by about
# e^0.4 ≈ 1.5×; accepted moves grow the step, rejected ones shrink it.
INITIAL_STEP = 0.4
MIN_STEP = 0.05
MAX_STEP = 1.5


class Move(BaseModel):
    """One proposal: which knob went which way."""

    knob: str
    direction: int  # +1 up, -1 down, 0 for a choice switch


class KnobMemory(BaseModel):
    """What the proposer learned about one knob."""

    step: float = INITIAL_STEP
    direction: int = 1
    accepted: int = 0
    rejected: int = 0


class OfflineProposer:
    """A seeded hill climber over a candidate's marked knobs."""

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)
        self._memory: dict[str, KnobMemory] = {}
        self._pending: dict[str, Move] = {}  # proposal hash → move

    def propose(self, parent: str, feedback: Sequence[Mapping[str, Any]]) -> str | None:
        """A changed copy of parent, or None when it marks no knob."""
        knobs = find_tunables(parent)
        if not knobs:
            return None
        self._learn(parent)
        axis = self._weakest_axis(feedback)
        knob = self._pick_knob(knobs, axis)
        child, move = self._turn(parent, knob)
        self._pending[_digest(child)] = move
        return child

    def _learn(self, parent: str) -> None:
        """Credit the move that produced parent, and debit the others."""
        accepted = self._pending.pop(_digest(parent), None)
        for move in self._pending.values():
            mem = self._memory.setdefault(move.knob, KnobMemory())
            mem.rejected += 1
            mem.step = max(MIN_STEP, mem.step * 0.7)
            mem.direction = -move.direction if move.direction else mem.direction
        self._pending.clear()
        if accepted is not None:
            mem = self._memory.setdefault(accepted.knob, KnobMemory())
            mem.accepted += 1
            mem.step = min(MAX_STEP, mem.step * 1.5)
            mem.direction = accepted.direction or mem.direction

    def _weakest_axis(self, feedback: Sequence[Mapping[str, Any]]) -> Axis:
        """The axis where the candidate trails lnd (or perfection) the most,
        drawn with weights so that no axis starves."""
        gaps = dict.fromkeys(AXES, 0.01)
        for item in feedback:
            mine = _scores(item, "Scores (Higher is Better)") or _scores(item, "scores")
            refs = item.get("lnd_scores") or {}
            for axis in AXES:
                best_ref = max((float(r.get(axis, 0.0)) for r in refs.values()), default=1.0)
                gaps[axis] += max(0.0, best_ref - mine.get(axis, 0.0)) + 0.1 * (
                    1.0 - mine.get(axis, 0.0)
                )
        # Success leads the score: weigh its gap as the score does.
        gaps["success"] *= 8
        return self._rng.choices(list(gaps), weights=list(gaps.values()))[0]

    def _pick_knob(self, knobs: list[Tunable], axis: Axis) -> Tunable:
        def weight(k: Tunable) -> float:
            mem = self._memory.get(k.name, KnobMemory())
            fit = 3.0 if k.axis == axis else (1.0 if k.axis is None else 0.3)
            return fit * (1 + mem.accepted) / (1 + 0.2 * mem.rejected)

        return self._rng.choices(knobs, weights=[weight(k) for k in knobs])[0]

    def _turn(self, parent: str, knob: Tunable) -> tuple[str, Move]:
        if knob.kind == "choice":
            others = [o for o in knob.options if o != knob.value] or knob.options
            child = set_value(parent, knob, self._rng.choice(others))
            return child, Move(knob=knob.name, direction=0)
        mem = self._memory.setdefault(knob.name, KnobMemory())
        direction = mem.direction if self._rng.random() < 0.75 else -mem.direction
        value = _moved(float(knob.value), direction, mem.step * self._rng.uniform(0.5, 1.5), knob)
        if value == knob.value:  # pinned at a bound: go the other way
            direction = -direction
            value = _moved(float(knob.value), direction, mem.step, knob)
        return set_value(parent, knob, value), Move(knob=knob.name, direction=direction)


def _moved(value: float, direction: int, step: float, knob: Tunable) -> float:
    """value moved by step in log space (linearly around zero), clamped."""
    low = knob.low if knob.low is not None else -math.inf
    high = knob.high if knob.high is not None else math.inf
    if value > 0 and low >= 0:
        new = value * math.exp(direction * step)
    else:
        span = (high - low) if math.isfinite(high - low) else max(abs(value), 1.0)
        new = value + direction * step * span / 4
    new = min(max(new, low), high)
    if knob.is_int:
        new = float(round(new))
        if new == value and low <= value + direction <= high:
            new = value + direction
    return new


def _scores(item: Mapping[str, Any], key: str) -> dict[str, float]:
    raw = item.get(key)
    return {k: float(v) for k, v in raw.items()} if isinstance(raw, Mapping) else {}


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()
