"""The offline proposer: evolution without a language model.

It turns the knobs a candidate marks (see tunables.py), one per proposal,
guided by the feedback: it picks the score axis on which the candidate
trails lnd the most on the minibatch, prefers the knobs tagged with that
axis, and learns which knobs and directions paid off. A move whose proposal
was accepted by GEPA pushes the same knob the same way with a larger step; a
rejected one shrinks the step and turns around; one that moved no score at
all takes a bigger step next time and is tried less. Everything is drawn from one
seeded RNG, so a run is reproducible.

It says when it has nothing left (`exhausted`): the candidate marks no knob,
every knob has moved INERT_LIMIT times in a row without changing any score,
or every move it draws repeats a candidate it already proposed. The run then
stops early instead of spending its budget on moves that change nothing.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from routesim_evolve.propose.base import Proposer
from routesim_evolve.propose.tunables import Axis, Tunable, find_tunables, set_value
from routesim_evolve.score.feedback import ScenarioFeedback

AXES: tuple[Axis, ...] = ("success", "retry_efficiency", "time_efficiency", "fee_efficiency")

# Step sizes in log space: the first move of a knob changes it by about
# e^0.4 ≈ 1.5×; accepted moves grow the step, rejected ones shrink it.
INITIAL_STEP = 0.4
MIN_STEP = 0.05
MAX_STEP = 1.5
# A knob whose last this-many moves changed no score is spent (its step has
# doubled each time, from INITIAL_STEP to MAX_STEP).
INERT_LIMIT = 3
# Draws per proposal before concluding that every move repeats an old one.
FRESH_DRAWS = 24


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
    inert: int = 0  # moves that changed no minibatch score
    inert_streak: int = 0  # of them, in a row since the last move that did


class OfflineProposer(Proposer):
    """A seeded hill climber over a candidate's marked knobs.

    It learns from the fate of each proposal: told directly through
    `outcome` (the dispatcher forwards GEPA's accept/reject events), or,
    failing that, inferred when the next parent is (accepted) or is not
    (rejected) its last proposal.
    """

    def __init__(self, seed: int = 0) -> None:
        self._rng = random.Random(seed)
        self._memory: dict[str, KnobMemory] = {}
        self._last: tuple[str, Move] | None = None  # digest and move of the last proposal
        self._proposed: set[str] = set()  # digests of every child and parent seen
        self._knobs: list[Tunable] | None = None  # the last parent's (None: not asked yet)
        self._stuck = False  # the last proposal found no move it had not made before

    def propose(self, parent: str, feedback: Sequence[ScenarioFeedback]) -> str | None:
        """A changed copy of parent never proposed before, or None when it
        marks no knob or every move repeats an earlier one."""
        knobs = self._knobs = find_tunables(parent)
        self._proposed.add(_digest(parent))
        if not knobs:
            return None
        if self._last is not None:
            self.outcome(accepted=self._last[0] == _digest(parent))
        axis = self._weakest_axis(feedback)
        for _ in range(FRESH_DRAWS):
            child, move = self._turn(parent, self._pick_knob(knobs, axis))
            digest = _digest(child)
            if digest not in self._proposed:
                self._stuck = False
                self._proposed.add(digest)
                self._last = (digest, move)
                return child
        self._stuck = True
        return None

    def exhausted(self) -> str | None:
        if self._knobs is None:
            return None
        if not self._knobs:
            return ("the candidate marks no knob (`// evolve:tunable` numbers or "
                    "`// evolve:choice` strings)")
        if self._stuck:
            return (f"every move it drew from the candidate repeats one of its "
                    f"{len(self._proposed)} earlier candidates")
        if not all(self._spent(k) for k in self._knobs):
            return None
        return (f"each knob the candidate marks ({', '.join(k.name for k in self._knobs)}) "
                f"moved up to {INERT_LIMIT} times in a row, with growing steps, without "
                "changing any score")

    def _spent(self, knob: Tunable) -> bool:
        """Its last moves changed no score: INERT_LIMIT of them, or for a
        choice every other option."""
        limit = INERT_LIMIT if knob.kind != "choice" else min(INERT_LIMIT, len(knob.options) - 1)
        return self._memory.get(knob.name, KnobMemory()).inert_streak >= limit

    def on_unchanged(self, note: str) -> None:
        self._last = None  # never evaluated: nothing to learn from it

    def snapshot(self) -> dict[str, Any]:
        return {
            "rng": self._rng.getstate(),
            "memory": {k: m.model_dump() for k, m in self._memory.items()},
            "last": None if self._last is None else (self._last[0], self._last[1].model_dump()),
            "proposed": sorted(self._proposed),
            "stuck": self._stuck,
        }

    def restore(self, snapshot: dict[str, Any]) -> None:
        self._rng.setstate(snapshot["rng"])
        self._memory = {k: KnobMemory(**m) for k, m in snapshot["memory"].items()}
        last = snapshot["last"]
        self._last = None if last is None else (last[0], Move(**last[1]))
        self._proposed = set(snapshot["proposed"])
        self._stuck = snapshot["stuck"]

    def outcome(self, *, accepted: bool, inert: bool = False) -> None:
        """Learn from the last proposal: accepted moves are pushed further the
        same way, rejected ones shrink and turn around, and inert ones (no
        score moved) take bigger steps but are tried less."""
        if self._last is None:
            return
        move = self._last[1]
        self._last = None
        mem = self._memory.setdefault(move.knob, KnobMemory())
        mem.inert_streak = mem.inert_streak + 1 if inert and not accepted else 0
        if accepted:
            mem.accepted += 1
            mem.step = min(MAX_STEP, mem.step * 1.5)
            mem.direction = move.direction or mem.direction
        elif inert:
            mem.inert += 1
            mem.step = min(MAX_STEP, mem.step * 2)
        else:
            mem.rejected += 1
            mem.step = max(MIN_STEP, mem.step * 0.7)
            mem.direction = -move.direction if move.direction else mem.direction

    # GEPACallback hooks, forwarded by the dispatcher ---------------------

    def on_candidate_accepted(self, event: Mapping[str, Any]) -> None:
        self.outcome(accepted=True)

    def on_candidate_rejected(self, event: Mapping[str, Any]) -> None:
        self.outcome(accepted=False, inert=event.get("new_score") == event.get("old_score"))

    def _weakest_axis(self, feedback: Sequence[ScenarioFeedback]) -> Axis:
        """The axis where the candidate trails lnd (or perfection) the most,
        drawn with weights so that no axis starves."""
        gaps = dict.fromkeys(AXES, 0.01)
        for item in feedback:
            mine = item.axes.as_dict()
            refs = [r.as_dict() for r in item.references.values()]
            for axis in AXES:
                best_ref = max((r[axis] for r in refs), default=1.0)
                gaps[axis] += max(0.0, best_ref - mine[axis]) + 0.1 * (1.0 - mine[axis])
        # Success leads the score: weigh its gap as the score does.
        gaps["success"] *= 8
        return self._rng.choices(list(gaps), weights=list(gaps.values()))[0]

    def _pick_knob(self, knobs: list[Tunable], axis: Axis) -> Tunable:
        def weight(k: Tunable) -> float:
            mem = self._memory.get(k.name, KnobMemory())
            fit = 3.0 if k.axis == axis else (1.0 if k.axis is None else 0.3)
            return fit * (1 + mem.accepted) / (1 + 0.2 * mem.rejected + 0.5 * mem.inert)

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
    new = knob.clamp(new)
    if knob.is_int:
        new = float(round(new))
        if new == value and low <= value + direction <= high:
            new = value + direction
    return new


def _digest(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()
