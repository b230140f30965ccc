"""The run's own log: one JSON line per proposal and score, the source of
every candidate once, and the progress display (progress.py).

GEPA's default logger prints whole candidates every iteration; this keeps
the run dir small and the screen readable instead.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TextIO

import orjson

from routesim_evolve.evolve.budget import EvalBudget
from routesim_evolve.evolve.progress import ProgressSnapshot, make_view
from routesim_evolve.fsutil import atomic_write
from routesim_evolve.reflect.cost import Charge, CostLedger
from routesim_evolve.score.evaluator import candidate_hash

Status = Callable[[], str]


class RunLog:
    """A GEPACallback that writes log.jsonl, candidates/*.go and progress."""

    def __init__(
        self,
        run_dir: Path,
        *,
        budget: EvalBudget,
        proposer: Status | None = None,
        stream: TextIO | None = None,
        ledger: CostLedger | None = None,
        judged: Callable[[], dict[str, Any] | None] | None = None,
    ) -> None:
        self.run_dir = run_dir
        self.path = run_dir / "log.jsonl"
        self.candidates_dir = run_dir / "candidates"
        self.budget = budget
        self._proposer = proposer or (lambda: "")
        self._view = make_view(stream)
        self._lock = threading.Lock()
        self._started = time.monotonic()
        self._used_at_start = budget.used  # a resumed run's earlier evaluations
        self.best_val: float | None = None
        # Whether this iteration's proposal held a new candidate: without
        # one nothing was evaluated, and its verdict says so.
        self._proposed = True
        self.candidates_dir.mkdir(parents=True, exist_ok=True)
        self.ledger = ledger
        # A sequential acceptance's last decision (rules.py DrawsEvidence).
        self._judged = judged or (lambda: None)
        self._cost_at_iteration_start = ledger.total_usd if ledger else 0.0
        if ledger is not None:
            ledger.on_charge = self._charged

    # Writing -------------------------------------------------------------

    def event(self, kind: str, **fields: Any) -> None:
        """Append one JSON line."""
        record = {"t": round(time.time(), 3), "event": kind, **fields}
        line = orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS, default=str)
        with self._lock, self.path.open("ab") as f:
            f.write(line + b"\n")

    def save_candidate(self, source: str) -> str:
        """Store a candidate's source once; returns its id."""
        cid = candidate_hash(source)
        path = self.candidates_dir / f"{cid}.go"
        if not path.exists():
            atomic_write(path, source.encode())
        return cid

    def snapshot(self) -> ProgressSnapshot:
        """The run's figures now; the rate counts this session's evaluations."""
        elapsed = time.monotonic() - self._started
        done = self.budget.used - self._used_at_start
        rate = 60.0 * done / elapsed if done > 0 and elapsed > 0 else None
        left = max(0, self.budget.limit - self.budget.used)
        return ProgressSnapshot(
            elapsed_s=elapsed, used=self.budget.used, limit=self.budget.limit,
            best_val=self.best_val, proposer=self._proposer(),
            cost=self.ledger.describe() if self.ledger and self.ledger.replies else "",
            evals_per_min=rate, eta_s=60.0 * left / rate if rate else None,
        )

    def progress(self, note: str = "") -> None:
        self._view.show(self.snapshot(), note)

    def close(self) -> None:
        """End the live display (a no-op for plain lines)."""
        self._view.close()

    # GEPACallback hooks --------------------------------------------------

    def on_optimization_start(self, event: Mapping[str, Any]) -> None:
        seed = candidate_text(event["seed_candidate"])
        self.event("start", seed=self.save_candidate(seed),
                   trainset=event["trainset_size"], valset=event["valset_size"])

    def on_proposal_end(self, event: Mapping[str, Any]) -> None:
        texts = event.get("new_instructions") or {}
        ids = [self.save_candidate(t) for t in texts.values()]
        self._proposed = bool(ids)
        self.event("proposal", iteration=event["iteration"], children=ids,
                   skipped=not ids, proposer=self._proposer())

    def on_proposal_start(self, event: Mapping[str, Any]) -> None:
        parent = candidate_text(event["parent_candidate"])
        self.event("parent", iteration=event["iteration"], parent=candidate_hash(parent))

    def on_evaluation_end(self, event: Mapping[str, Any]) -> None:
        self.event("minibatch", iteration=event["iteration"],
                   candidate=event.get("candidate_idx"), scores=event["scores"],
                   seed=event.get("is_seed_candidate", False))

    def on_candidate_accepted(self, event: Mapping[str, Any]) -> None:
        self.event("accepted", iteration=event["iteration"], idx=event["new_candidate_idx"],
                   score=event["new_score"], **self._decision())

    def on_candidate_rejected(self, event: Mapping[str, Any]) -> None:
        self.event("rejected", iteration=event["iteration"], old=event["old_score"],
                   new=event["new_score"], reason=event["reason"], **self._decision())

    def _decision(self) -> dict[str, Any]:
        decision = self._judged()
        return {} if decision is None else {"decision": decision}

    def on_valset_evaluated(self, event: Mapping[str, Any]) -> None:
        source = candidate_text(event["candidate"])
        score = float(event["average_score"])
        improved = self.best_val is None or score > self.best_val
        if improved:
            self.best_val = score
        self.event("val", iteration=event["iteration"], idx=event["candidate_idx"],
                   candidate=self.save_candidate(source), score=score,
                   scores={str(k): v for k, v in event["scores_by_val_id"].items()},
                   best=bool(event.get("is_best_program")))
        self.progress(f"candidate {event['candidate_idx']} val {score:.4f}"
                      + ("  ▲ new best" if improved else ""))

    def on_iteration_end(self, event: Mapping[str, Any]) -> None:
        verdict = ("accepted" if event["proposal_accepted"] else "not better" if self._proposed
                   else "skipped: no new candidate to evaluate")
        note = f"iteration {event['iteration']}: {verdict}"
        if self.ledger is not None and self.ledger.replies:
            spent = self.ledger.total_usd - self._cost_at_iteration_start
            self._cost_at_iteration_start = self.ledger.total_usd
            self.event("cost", iteration=event["iteration"], iteration_usd=round(spent, 6),
                       total_usd=round(self.ledger.total_usd, 6),
                       unpriced=sorted(self.ledger.unpriced))
            if self.ledger.priced_replies:
                note += f" (+${spent:.2f})"
        self.progress(note)

    def _charged(self, charge: Charge) -> None:
        """Every LM reply's tokens and price, as the back-end reported them."""
        self.event("lm_usage", backend=charge.backend, model=charge.model,
                   cost_usd=charge.cost_usd, **charge.usage.model_dump(exclude_none=True))

    def on_error(self, event: Mapping[str, Any]) -> None:
        self.event("error", iteration=event["iteration"], error=repr(event["exception"]),
                   will_continue=event["will_continue"])


def candidate_text(candidate: Mapping[str, str] | str) -> str:
    """A candidate's source: GEPA hands out the plain string or, in its
    events, the one-component dict it wraps it in."""
    if isinstance(candidate, str):
        return candidate
    return next(iter(candidate.values()))
