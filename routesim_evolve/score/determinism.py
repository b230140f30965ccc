"""Each new candidate runs twice on the first scenario it meets, and the two
`--no-timing` result files must be byte-identical.

Evolution keeps whatever score a candidate got first: a router whose result
depends on map iteration order, goroutine scheduling or a select over ready
channels would be kept or dropped by chance. candcheck already refuses the
wall clock and the global random sources; this catches the rest at run
time.

The rule (docs/scoring.md): a candidate whose two runs differ scores 0 on
every scenario, with feedback naming the first payment that differed and the
likely causes. A second run that ended by a timeout or a harness fault
decides nothing (the machine may be loaded), and the check moves to the
candidate's next scenario. The verdict is kept beside the candidate's
evaluations, so a resumed run does not run it again.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from routesim_evolve.build.fsutil import atomic_write
from routesim_evolve.simulate.outcome import RunOutcome, RunStatus
from routesim_evolve.simulate.result import Result

#: What usually makes a Go router differ between two runs of one input.
LIKELY_CAUSES = (
    "iterating over a map and acting on the order met (collect the keys and sort them)",
    "goroutines whose results are combined in the order they finish, or a select over "
    "several ready channels",
    "state shared between goroutines without synchronisation",
)


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


class DeterminismCheck:
    """The verdicts of one evaluator's candidates, in memory and (with a
    cache dir) on disk as `<cache_dir>/<candidate id>/determinism.verdict`."""

    def __init__(self, cache_dir: Path | None) -> None:
        self._cache_dir = cache_dir
        self._lock = threading.Lock()
        self._verdicts: dict[str, Verdict] = {}
        self._pending: dict[str, threading.Event] = {}

    def run(
        self, candidate_id: str, scenario: str, run: Callable[[], RunOutcome]
    ) -> tuple[RunOutcome, Verdict | None]:
        """Run once, or twice when this candidate has no verdict yet (other
        threads wait for it meanwhile). Returns the first run and the
        verdict, if there is one."""
        while True:
            with self._lock:
                verdict = self._verdicts.get(candidate_id) or self._load(candidate_id)
                if verdict is not None:
                    self._verdicts[candidate_id] = verdict
                    return run(), verdict
                waiting = self._pending.get(candidate_id)
                if waiting is None:
                    done = self._pending[candidate_id] = threading.Event()
                    break
            waiting.wait()
        try:
            first = run()
            verdict = self._judge(first, run(), scenario) if first.ok else None
            if verdict is not None:
                with self._lock:
                    self._verdicts[candidate_id] = verdict
                self._save(candidate_id, verdict)
            return first, verdict
        finally:
            with self._lock:
                del self._pending[candidate_id]
            done.set()

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

    def _load(self, candidate_id: str) -> Verdict | None:
        path = self._path(candidate_id)
        if path is None or not path.is_file():
            return None
        try:
            return Verdict.model_validate_json(path.read_bytes())
        except (OSError, ValueError):
            return None  # damaged: judge again

    def _save(self, candidate_id: str, verdict: Verdict) -> None:
        path = self._path(candidate_id)
        if path is not None:
            atomic_write(path, verdict.model_dump_json().encode())


def first_difference(a: Result, b: Result) -> str:
    """The first payment whose outcome differs between two results, in words."""
    for pa, pb in zip(a.payments, b.payments, strict=False):
        if pa != pb:
            fields = [f for f in ("success", "attempts", "parts", "fee_msat", "delivered_msat")
                      if getattr(pa, f) != getattr(pb, f)]
            what = ", ".join(f"{f} {getattr(pa, f)} vs {getattr(pb, f)}" for f in fields)
            return f"payment {pa.index} first differs" + (f": {what}" if what else " in attempts")
    return "the result files differ"
