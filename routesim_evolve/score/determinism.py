"""Each new candidate runs twice on the first scenario it meets in every
arena, and on a share of its other scenarios that a secret picks, and the
two `--no-timing` result files must be byte-identical.

Evolution keeps whatever score a candidate got first: a router whose result
depends on map iteration order, goroutine scheduling or a select over ready
channels would be kept or dropped by chance. candcheck already refuses the
wall clock and the global random sources; this catches the rest at run
time.

The rule (docs/scoring.md): a candidate whose two runs differ scores 0 on
every scenario from then on, with feedback naming the first payment that
differed and the likely causes. Once per arena, since a router may behave
differently where failures are garbled or liquidity drifts; a sample all the
same, not a proof. A router could be deterministic only where it expects
the check (the first scenario of an arena, small graphs), so besides, each
of its other scenarios is run twice with probability RECHECK_SHARE, decided
by an HMAC of the candidate and the scenario under a secret of the process
that no candidate can read: it cannot tell which runs are checked. This
costs about RECHECK_SHARE more runs. A second run that ended by a timeout or a harness fault
decides nothing (the machine may be loaded), and the check moves to the
arena's next scenario. The verdicts are kept beside the candidate's
evaluations, so a resumed run does not run them again.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from routesim_evolve.fsutil import atomic_write
from routesim_evolve.simulate.result_format import Result
from routesim_evolve.simulate.run_outcome import RunOutcome, RunStatus

#: What usually makes a Go router differ between two runs of one input.
LIKELY_CAUSES = (
    "iterating over a map and acting on the order met (collect the keys and sort them)",
    "goroutines whose results are combined in the order they finish, or a select over "
    "several ready channels",
    "state shared between goroutines without synchronisation",
)


#: The share of a candidate's scenarios, after the first of each arena, run
#: twice all the same (picked by a secret).
RECHECK_SHARE = 0.2


class Verdict(BaseModel):
    """Whether a candidate gave identical results twice."""

    deterministic: bool
    scenario: str
    detail: str = ""

    def feedback(self) -> str:
        causes = "\n".join(f"- {c}" for c in LIKELY_CAUSES)
        return (
            f"Scored 0: two runs of this router on {self.scenario}, with the same inputs, "
            f"gave different results ({self.detail}). A router must be deterministic, or "
            f"its score means nothing; until it is, every scenario scores 0. Likely "
            f"causes:\n{causes}"
        )


class Verdicts(BaseModel):
    """A candidate's verdicts, by arena."""

    by_arena: dict[str, Verdict] = {}

    def condemning(self) -> Verdict | None:
        """The first verdict that found two runs differing, if any."""
        return next((v for v in self.by_arena.values() if not v.deterministic), None)


class DeterminismCheck:
    """The verdicts of one evaluator's candidates, in memory and (with a
    cache dir) on disk as `<cache_dir>/<candidate id>/determinism.verdict`."""

    def __init__(self, cache_dir: Path | None, *, recheck_share: float = RECHECK_SHARE,
                 secret: bytes | None = None) -> None:
        self._cache_dir = cache_dir
        self._recheck_share = recheck_share
        self._secret = secret if secret is not None else os.urandom(32)
        self._lock = threading.Lock()
        self._verdicts: dict[str, Verdicts] = {}
        self._pending: dict[tuple[str, str], threading.Event] = {}

    def run(
        self, candidate_id: str, arena: str, scenario: str, run: Callable[[], RunOutcome]
    ) -> tuple[RunOutcome, Verdict | None]:
        """Run once, or twice when this candidate has no verdict for the
        arena yet (other threads of the arena wait meanwhile) or the secret
        picked this scenario. Returns the first run and the verdict that
        rules the candidate here: a condemning one from any arena, else this
        arena's, if any."""
        key = (candidate_id, arena)
        while True:
            with self._lock:
                known = self._known(candidate_id)
                verdict = known.condemning() or known.by_arena.get(arena)
            if verdict is not None and (not verdict.deterministic
                                        or not self.picked(candidate_id, scenario)):
                return run(), verdict
            if verdict is not None:
                return self._recheck(candidate_id, arena, scenario, run, verdict)
            with self._lock:
                if self._known(candidate_id).by_arena.get(arena) is not None:
                    continue  # judged while this thread looked
                waiting = self._pending.get(key)
                if waiting is None:
                    done = self._pending[key] = threading.Event()
                    break
            waiting.wait()
        try:
            first = run()
            verdict = self._judge(first, run(), scenario) if first.ok else None
            if verdict is not None:
                with self._lock:
                    known = self._known(candidate_id)
                    known.by_arena[arena] = verdict
                    self._save(candidate_id, known)
            return first, verdict
        finally:
            with self._lock:
                del self._pending[key]
            done.set()

    def picked(self, candidate_id: str, scenario: str) -> bool:
        """Whether this scenario of this candidate is run twice all the same:
        a keyed hash under the process's secret, below the share."""
        mac = hmac.new(self._secret, f"{candidate_id}/{scenario}".encode(), hashlib.sha256)
        return int.from_bytes(mac.digest()[:8], "big") < self._recheck_share * 2**64

    def _recheck(self, candidate_id: str, arena: str, scenario: str,
                 run: Callable[[], RunOutcome], verdict: Verdict) -> tuple[RunOutcome, Verdict]:
        """Run a scenario the secret picked twice; a difference condemns the
        candidate from then on."""
        first = run()
        again = self._judge(first, run(), scenario) if first.ok else None
        if again is None or again.deterministic:
            return first, verdict
        with self._lock:
            known = self._known(candidate_id)
            known.by_arena[arena] = again
            self._save(candidate_id, known)
        return first, again

    def _known(self, candidate_id: str) -> Verdicts:
        """The candidate's verdicts (call with the lock held)."""
        if candidate_id not in self._verdicts:
            self._verdicts[candidate_id] = self._load(candidate_id) or Verdicts()
        return self._verdicts[candidate_id]

    @staticmethod
    def _judge(first: RunOutcome, second: RunOutcome, scenario: str) -> Verdict | None:
        if second.harness_fault or second.status is RunStatus.TIMEOUT:
            return None
        if not second.ok or second.result is None or first.result is None:
            detail = f"the first delivered a result, the second ended: {second.status}"
            return Verdict(deterministic=False, scenario=scenario, detail=detail)
        if second.result_sha256 == first.result_sha256:
            return Verdict(deterministic=True, scenario=scenario)
        return Verdict(deterministic=False, scenario=scenario,
                       detail=first_difference(first.result, second.result))

    def _path(self, candidate_id: str) -> Path | None:
        if self._cache_dir is None:
            return None
        return self._cache_dir / candidate_id / "determinism.verdict"

    def _load(self, candidate_id: str) -> Verdicts | None:
        path = self._path(candidate_id)
        if path is None or not path.is_file():
            return None
        try:
            return Verdicts.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            return None  # damaged: judge again

    def _save(self, candidate_id: str, verdicts: Verdicts) -> None:
        path = self._path(candidate_id)
        if path is not None:
            atomic_write(path, verdicts.model_dump_json().encode())


def first_difference(a: Result, b: Result) -> str:
    """The first payment whose outcome differs between two results, in words."""
    for pa, pb in zip(a.payments, b.payments, strict=False):
        if pa != pb:
            fields = [f for f in ("success", "attempts", "parts", "fee_msat", "delivered_msat")
                      if getattr(pa, f) != getattr(pb, f)]
            what = ", ".join(f"{f} {getattr(pa, f)} vs {getattr(pb, f)}" for f in fields)
            return f"payment {pa.index} first differs" + (f": {what}" if what else " in attempts")
    return "the result files differ"
