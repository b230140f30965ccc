"""Read a run directory back for the HTML report: its settings, its log
(lineage, val scores over metric calls, cost where recorded), its candidates,
its evaluations and, once the run has finished, its held-out summary.

Everything is read, nothing is run: the report of a run in progress shows
what the run dir holds so far.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from routesim_evolve.cli_error import UserError
from routesim_evolve.corpus.examples import ScenarioExample
from routesim_evolve.reflect.usage import Usage
from routesim_evolve.runs.settings import EvolveSettings, RunSummary
from routesim_evolve.runs.stamp import SCORING_FILE, run_scoring_version
from routesim_evolve.score.axes import AXES, SCORING_VERSION
from routesim_evolve.score.evaluator import Evaluation, cached_evaluations, eval_cache_file

#: Run logs before the live progress display wrote the proposer as "proposer NAME".
_PROPOSER_PREFIX = "proposer "


class LogEvent(BaseModel):
    """One line of log.jsonl. Fields beyond these (cost, progress) are kept."""

    model_config = ConfigDict(extra="allow")

    t: float
    event: str
    iteration: int | None = None

    def field(self, name: str) -> Any:
        return (self.model_extra or {}).get(name)


class CandidateRecord(BaseModel):
    """One candidate in the lineage: where it came from and how it did."""

    id: str
    iteration: int | None = None
    parent: str | None = None
    proposer: str | None = None
    #: "seed", "accepted" (scored on val), "rejected" (lost on the minibatch)
    #: or "pending" (the log ends before its verdict).
    verdict: str = "pending"
    val_score: float | None = None


class ValPoint(BaseModel):
    """A val score, the metric calls spent when it was logged, and the best so far."""

    candidate: str
    metric_calls: int
    score: float
    best: float


class CostRecord(BaseModel):
    """What the run's LM replies cost, from its `lm_usage` events (one per
    reply, written by the cost ledger; see docs/llm.md)."""

    replies: int = 0
    total_usd: float = 0.0
    unpriced: list[str] = []  # back-ends whose replies had no price
    usage: Usage = Usage()

    @property
    def recorded(self) -> bool:
        return self.replies > 0


class AxisPoint(BaseModel):
    """A candidate's mean score axes over the val scenarios."""

    candidate: str
    success: float
    retry_efficiency: float
    time_efficiency: float = 0.0
    fee_efficiency: float
    score: float
    on_frontier: bool = False


class RunRecord(BaseModel):
    """What the report shows of one run dir."""

    run_dir: Path
    settings: EvolveSettings
    seed_id: str
    candidates: list[CandidateRecord]
    val_points: list[ValPoint]
    cost: CostRecord
    seed_source: str
    best_source: str
    #: The held-out summary; None until the run has finished.
    summary: RunSummary | None = None
    metric_calls: int = 0
    #: The scoring version the run was scored under (docs/scoring.md).
    scoring_version: int = SCORING_VERSION


def run_error(path: Path, problem: str) -> UserError:
    return UserError(f"{path}: {problem}. Give the run dir an evolution run wrote "
                     "(RUNS/NAME, e.g. runs/corpus-20250101-120000).")


def load_run(run_dir: Path) -> RunRecord:
    """Read a run dir; a missing or malformed file the report needs is a UserError."""
    if not run_dir.is_dir():
        raise run_error(run_dir, "no such directory")
    settings = _read_model(run_dir / "settings.json", EvolveSettings)
    events = list(read_log(run_dir / "log.jsonl"))
    starts = [e for e in events if e.event == "start"]
    if not starts or not isinstance(starts[0].field("seed"), str):
        raise run_error(run_dir / "log.jsonl", "no start event naming the seed candidate")
    seed_id = starts[0].field("seed")
    summary_path = run_dir / "report.json"
    summary = _read_model(summary_path, RunSummary) if summary_path.exists() else None
    candidates = lineage(events, seed_id)
    best_id = max((c for c in candidates if c.val_score is not None),
                  key=lambda c: c.val_score or 0.0, default=None)
    best_path = run_dir / "best.go"
    best_source = (best_path.read_text() if best_path.is_file()
                   else candidate_source(run_dir, best_id.id if best_id else seed_id))
    version = _scoring_version(run_dir)
    call_times = eval_times(run_dir, version)
    return RunRecord(
        run_dir=run_dir,
        settings=settings,
        seed_id=seed_id,
        candidates=candidates,
        val_points=val_points(events, call_times),
        cost=cost_record(events),
        seed_source=candidate_source(run_dir, seed_id),
        best_source=best_source,
        summary=summary,
        metric_calls=len(call_times),
        scoring_version=version,
    )


def _scoring_version(run_dir: Path) -> int:
    version = run_scoring_version(run_dir)
    if not isinstance(version, int):
        raise run_error(run_dir / SCORING_FILE, f"scoring version {version}")
    return version


M = TypeVar("M", bound=BaseModel)


def _read_model(path: Path, model: type[M]) -> M:
    if not path.is_file():
        raise run_error(path, "missing")
    try:
        return model.model_validate_json(path.read_bytes())
    except (ValidationError, ValueError) as exc:
        raise run_error(path, f"malformed ({_first_error(exc)})") from None


def _first_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(str(p) for p in err['loc']) or 'file'}: {err['msg']}"
    return str(exc).splitlines()[0]


def read_log(path: Path) -> Iterator[LogEvent]:
    """The log's events in order. A torn last line (a run killed while
    writing) is left out; a malformed line elsewhere is an error."""
    if not path.is_file():
        raise run_error(path, "missing")
    lines = path.read_text().splitlines()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield LogEvent.model_validate(json.loads(line))
        except (ValidationError, ValueError) as exc:
            if number == len(lines):
                return
            raise run_error(path, f"line {number} is malformed ({_first_error(exc)})") from None


def lineage(events: list[LogEvent], seed_id: str) -> list[CandidateRecord]:
    """Every candidate proposed, in order, with its parent, proposer, verdict
    and val score."""
    seed = CandidateRecord(id=seed_id, verdict="seed")
    records = [seed]
    parents: dict[int, str] = {}
    by_iteration: dict[int, list[CandidateRecord]] = {}
    for e in events:
        it = e.iteration
        if e.event == "parent" and it is not None:
            parents[it] = str(e.field("parent"))
        elif e.event == "proposal" and it is not None:
            proposer = str(e.field("proposer") or "").removeprefix(_PROPOSER_PREFIX) or None
            children = [CandidateRecord(id=str(c), iteration=it, parent=parents.get(it),
                                        proposer=proposer) for c in e.field("children") or []]
            by_iteration[it] = children
            records += children
        elif e.event in ("accepted", "rejected") and it is not None:
            for child in by_iteration.get(it, []):
                child.verdict = e.event
        elif e.event == "val":
            cid, score = e.field("candidate"), e.field("score")
            scored = [r for r in records if r.id == cid and r.val_score is None]
            if scored and isinstance(score, int | float):
                scored[-1].val_score = float(score)
    return records


def eval_times(run_dir: Path, version: int = SCORING_VERSION) -> list[float]:
    """When each evaluation was run (its cache file's mtime), sorted: the
    run's metric calls, as its budget counts them."""
    evals = run_dir / "evals"
    if not evals.is_dir():
        return []
    return sorted(p.stat().st_mtime for p in cached_evaluations(evals, version))


def val_points(events: list[LogEvent], call_times: list[float]) -> list[ValPoint]:
    """Each val score with the metric calls spent by then: the event's own
    count when the log records one, else the evaluations run before it."""
    points: list[ValPoint] = []
    best = float("-inf")
    for e in events:
        score = e.field("score")
        if e.event != "val" or not isinstance(score, int | float):
            continue
        recorded = e.field("metric_calls")
        calls = (recorded if isinstance(recorded, int)
                 else sum(1 for t in call_times if t <= e.t + 1e-3))
        best = max(best, float(score))
        points.append(ValPoint(candidate=str(e.field("candidate")), metric_calls=calls,
                               score=float(score), best=best))
    return points


def cost_record(events: list[LogEvent]) -> CostRecord:
    """The `lm_usage` events summed: replies, dollars, unpriced back-ends, tokens."""
    record = CostRecord()
    for e in events:
        if e.event != "lm_usage":
            continue
        usage = Usage.model_validate({k: v for k, v in (e.model_extra or {}).items()
                                      if k in Usage.model_fields})
        cost = e.field("cost_usd")
        record = record.model_copy(update={
            "replies": record.replies + 1,
            "usage": record.usage + usage,
            "total_usd": record.total_usd + (float(cost) if cost is not None else 0.0),
            "unpriced": (record.unpriced if cost is not None
                         else sorted({*record.unpriced, str(e.field("backend"))})),
        })
    return record


def candidate_source(run_dir: Path, cid: str) -> str:
    path = run_dir / "candidates" / f"{cid}.go"
    if not path.is_file():
        raise run_error(path, "missing (the run log names this candidate)")
    return path.read_text()


def candidate_evaluations(
    run: RunRecord, source: str, examples: list[ScenarioExample]
) -> list[Evaluation]:
    """The candidate's cached evaluations on these scenarios (those it has)."""
    found = []
    for ex in examples:
        path = eval_cache_file(run.run_dir / "evals", source, ex, run.scoring_version)
        if path.is_file():
            try:
                found.append(Evaluation.model_validate_json(path.read_bytes()))
            except (ValidationError, ValueError) as exc:
                raise run_error(path, f"malformed ({_first_error(exc)})") from None
    return found


def axis_points(run: RunRecord, val: list[ScenarioExample]) -> list[AxisPoint]:
    """The mean score axes on val of every candidate scored on all of val,
    with the non-dominated ones (on every axis) marked."""
    points: list[AxisPoint] = []
    for c in run.candidates:
        if (c.val_score is None and c.verdict != "seed") or any(p.candidate == c.id
                                                                  for p in points):
            continue
        evals = candidate_evaluations(run, candidate_source(run.run_dir, c.id), val)
        if not val or len(evals) != len(val):
            continue
        mean = {a: sum(getattr(ev.axes, a) for ev in evals) / len(evals) for a in AXES}
        points.append(AxisPoint(candidate=c.id, score=sum(ev.score for ev in evals) / len(evals),
                                **mean))
    for p in points:
        p.on_frontier = not any(_dominates(q, p) for q in points)
    return points


def _dominates(a: AxisPoint, b: AxisPoint) -> bool:
    va = [getattr(a, ax) for ax in AXES]
    vb = [getattr(b, ax) for ax in AXES]
    return all(x >= y for x, y in zip(va, vb, strict=True)) and va != vb
