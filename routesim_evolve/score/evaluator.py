"""The evaluator: one candidate on one scenario → score and side info.

It is what GEPA calls (`evaluate(candidate, example)`), and what the `eval`
and `compare` commands run in parallel. Given a cache dir (an evolution
run's `evals/`), results are cached on disk by the candidate's and the
scenario's content and the scoring version, and an entry is served only to
the simulator it ran on (the Go module's fingerprint, the candidate's file
left out), so a resumed run never runs the same pair twice; `eval`
and `compare` keep no such cache and run every pair afresh. lnd's results
come from the reference cache and never depend on the candidate.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from pydantic import BaseModel, ValidationError

from routesim_evolve.build.gomodule import module_fingerprint
from routesim_evolve.build.heartbeat import heartbeat
from routesim_evolve.corpus.examples import ScenarioExample
from routesim_evolve.corpus.schema import Scenario
from routesim_evolve.fsutil import atomic_write
from routesim_evolve.score.axes import (
    SCORING_VERSION,
    ZERO,
    ScoreAxes,
    payment_shares,
    score_result,
)
from routesim_evolve.score.determinism import RECHECK_SHARE, DeterminismCheck
from routesim_evolve.score.feedback import ScenarioFeedback, describe_result
from routesim_evolve.score.invariants import result_violations
from routesim_evolve.simulate.executor import LOCAL, Executor
from routesim_evolve.simulate.reference import ReferenceCache
from routesim_evolve.simulate.result_format import Result
from routesim_evolve.simulate.routers import ORACLE, PRODUCTION_ROUTERS, bridge_of
from routesim_evolve.simulate.run_candidate import run_candidate
from routesim_evolve.simulate.run_outcome import RunOutcome
from routesim_evolve.simulate.sandbox import DEFAULT_LIMITS, SandboxLimits
from routesim_evolve.textclip import clip_block

Runner = Callable[[str, Path], RunOutcome]

#: The status of a result that breaks the payment rules (see invariants.py).
INVALID_RESULT = "invalid_result"
#: The status of every evaluation of a candidate whose two runs differed.
NONDETERMINISTIC = "nondeterministic"
#: Violations quoted in the feedback; the rest are counted.
MAX_VIOLATIONS_SHOWN = 8

log = logging.getLogger(__name__)


class References(Protocol):
    """The reference routers' results per scenario, by router name."""

    def results(self, example: ScenarioExample) -> Mapping[str, Result]: ...


class Evaluation(BaseModel):
    """A candidate on a scenario: the outcome, scored and explained."""

    scenario: str
    arena: str
    status: str
    axes: ScoreAxes
    feedback: str
    result: Result | None = None
    #: The fingerprint of the Go module (all but the candidate: the
    #: simulator, the toolkit, the harness) the evaluation ran on; a cached
    #: evaluation of another one is never served (empty before it was kept).
    simulator: str = ""

    @property
    def score(self) -> float:
        return self.axes.score


class Evaluator:
    """Scores candidates on scenarios, with a disk cache by content."""

    def __init__(
        self,
        references: References,
        *,
        cache_dir: Path | None = None,
        limits: SandboxLimits = DEFAULT_LIMITS,
        runner: Runner | None = None,
        executor: Executor = LOCAL,
        recheck_share: float = RECHECK_SHARE,
        go_dir: Path | None = None,
        ceiling: References | None = None,
    ) -> None:
        self._references = references
        # Where the oracle's result comes from, for the feedback alone
        # (proposers' scores and tables compare with lnd and LDK only).
        self._ceiling = ceiling
        self._go_dir = go_dir
        self._cache_dir = cache_dir
        self._scenarios: dict[str, Scenario] = {}
        self._determinism = DeterminismCheck(cache_dir, recheck_share=recheck_share)
        self._rules_lock = threading.Lock()
        self._run: Runner = runner or (
            lambda source, path: run_candidate(source, path, limits=limits, executor=executor)
        )

    def __call__(self, candidate: str, example: ScenarioExample) -> tuple[float, dict[str, Any]]:
        """GEPA's evaluator: the parameter must be named `example`."""
        ev = self.evaluate(candidate, example)
        return ev.score, self.side_info(ev, example)

    def evaluate(self, candidate: str, example: ScenarioExample) -> Evaluation:
        """One candidate on one scenario, from the cache when it was run
        before. Its feedback is capped: much of it quotes the candidate."""
        cached = self._cache_file(candidate, example)
        simulator = self._simulator()
        if cached is not None and cached.is_file():
            try:
                hit = Evaluation.model_validate_json(cached.read_bytes())
            except (OSError, ValidationError):
                log.warning("evaluation cache entry %s is unreadable: evaluating again", cached)
            else:
                if hit.simulator == simulator:
                    return hit
                log.info("evaluation cache entry %s ran on another simulator: evaluating again",
                         cached)
        ev, cacheable = self._evaluate_fresh(candidate, example)
        ev = ev.model_copy(update={"feedback": clip_block(ev.feedback), "simulator": simulator})
        if cached is not None and cacheable:
            atomic_write(cached, ev.model_dump_json().encode())
        return ev

    def evaluate_many(
        self,
        candidate: str,
        examples: Sequence[ScenarioExample],
        *,
        workers: int | None = None,
        on_done: Callable[[Evaluation], None] | None = None,
    ) -> list[Evaluation]:
        """One candidate on many scenarios in parallel, in the examples' order."""
        workers = workers or os.cpu_count() or 1

        def one(example: ScenarioExample) -> Evaluation:
            ev = self.evaluate(candidate, example)
            if on_done is not None:
                on_done(ev)
            return ev

        if workers <= 1:
            return [one(e) for e in examples]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, examples))

    def _oracle(self, example: ScenarioExample) -> Result | None:
        if self._ceiling is None:
            return None
        return self._ceiling.results(example).get(ORACLE)

    def side_info(self, ev: Evaluation, example: ScenarioExample) -> dict[str, Any]:
        """What GEPA keeps and hands the proposers: a ScenarioFeedback."""
        refs = self._references.results(example)
        return ScenarioFeedback(
            scenario=example.name,
            arena=example.arena,
            score=round(ev.score, 4),
            axes=ev.axes,
            references={name: score_result(r) for name, r in refs.items()},
            text=ev.feedback,
            shares=payment_shares(ev.result) if ev.result is not None and ev.score > 0 else [],
        ).side_info()

    def _evaluate_fresh(
        self, candidate: str, example: ScenarioExample
    ) -> tuple[Evaluation, bool]:
        """The evaluation, and whether it may be cached: a fault of the
        harness (not of the candidate) is scored 0 but tried again later."""
        outcome, verdict = self._determinism.run(
            eval_cache_folder(candidate), example.arena, example.name,
            lambda: self._run(candidate, example.path),
        )
        refs = self._references.results(example)
        if verdict is not None and not verdict.deterministic:
            return Evaluation(
                scenario=example.name,
                arena=example.arena,
                status=NONDETERMINISTIC,
                axes=ZERO,
                feedback=verdict.feedback(),
                result=outcome.result,
            ), True
        if not outcome.ok or outcome.result is None:
            delivered = "; ".join(
                f"{name} delivered {r.totals.succeeded}/{r.totals.payments}"
                for name, r in refs.items()
            )
            feedback = f"Scored 0 on {example.name}: {outcome.status}.\n{outcome.feedback}"
            if delivered:
                feedback += f"\n(For reference, {delivered}.)"
            failed = Evaluation(
                scenario=example.name,
                arena=example.arena,
                status=str(outcome.status),
                axes=ZERO,
                feedback=feedback.strip(),
            )
            return failed, not outcome.harness_fault
        broken = result_violations(outcome.result, self._rules(example))
        if broken:
            shown = "\n".join(f"- {b}" for b in broken[:MAX_VIOLATIONS_SHOWN])
            more = len(broken) - MAX_VIOLATIONS_SHOWN
            return Evaluation(
                scenario=example.name,
                arena=example.arena,
                status=INVALID_RESULT,
                axes=ZERO,
                feedback=(f"Scored 0 on {example.name}: the result breaks the payment rules "
                          f"(the scorer checks them itself):\n{shown}"
                          + (f"\n(and {more} more)" if more > 0 else "")),
                result=outcome.result,
            ), True
        scored = Evaluation(
            scenario=example.name,
            arena=example.arena,
            status=str(outcome.status),
            axes=score_result(outcome.result),
            feedback=describe_result(outcome.result, refs, oracle=self._oracle(example)),
            result=outcome.result,
        )
        return scored, True

    def _simulator(self) -> str:
        """The fingerprint of the Go module every candidate is built into,
        the candidate's own file left out: a change to the simulator, the
        toolkit or the harness changes what a cached score would be."""
        return module_fingerprint(self._go_dir, include_candidate=False)

    def _rules(self, example: ScenarioExample) -> Scenario:
        """The scenario file itself, read once: the rules a result must keep."""
        with self._rules_lock:
            known = self._scenarios.get(example.content_hash)
        if known is None:
            known = Scenario.model_validate_json(example.path.read_bytes())
            with self._rules_lock:
                self._scenarios[example.content_hash] = known
        return known

    def recorded_runs(self) -> int:
        """How many (candidate, scenario) pairs the cache holds: what the
        run has spent, whatever process spent it."""
        if self._cache_dir is None or not self._cache_dir.is_dir():
            return 0
        return sum(1 for _ in cached_evaluations(self._cache_dir))

    def uncached(self, candidate: str, examples: Sequence[ScenarioExample]) -> int:
        """How many of these pairs the cache cannot answer: what evaluating
        them would add to `recorded_runs` (a pair cached under another
        simulator is evaluated again in its place, adding nothing)."""
        files = [self._cache_file(candidate, e) for e in examples]
        return sum(f is None or not f.is_file() for f in files)

    def _cache_file(self, candidate: str, example: ScenarioExample) -> Path | None:
        if self._cache_dir is None:
            return None
        return eval_cache_file(self._cache_dir, candidate, example)


def eval_cache_file(
    evals_dir: Path, source: str, example: ScenarioExample, version: int = SCORING_VERSION
) -> Path:
    """Where the evaluation of `source` on `example` is cached in `evals_dir`:
    by the candidate's and the scenario's content and by the scoring version,
    so an evaluation scored under another version is never read back as
    this one's (`version` reads a run dir of an earlier one)."""
    name = f"{example.content_hash[:24]}{_version_suffix(version)}.json"
    return evals_dir / eval_cache_folder(source) / name


def cached_evaluations(evals_dir: Path, version: int = SCORING_VERSION) -> list[Path]:
    """Every evaluation cached in `evals_dir` under that scoring version."""
    name = re.compile(rf"[0-9a-f]{{24}}{re.escape(_version_suffix(version))}\.json")
    return [p for p in evals_dir.glob("*/*.json") if name.fullmatch(p.name)]


def _version_suffix(version: int) -> str:
    # Version 1 named its files by content alone.
    return "" if version == 1 else f".s{version}"


def eval_cache_folder(source: str) -> str:
    """The candidate's folder in an evaluation cache (`evals/FOLDER/`); the
    HTML report reads a run's evaluations by it."""
    return hashlib.sha256(source.encode()).hexdigest()[:24]


def candidate_hash(source: str) -> str:
    """A short content id of a candidate, for logs and file names."""
    return hashlib.sha256(source.encode()).hexdigest()[:12]


class ReferenceResults:
    """The production routers' results for scenarios (lnd's and LDK's), from
    the on-disk reference cache, kept in memory once read."""

    def __init__(self, cache: ReferenceCache | None = None,
                 routers: Sequence[str] = PRODUCTION_ROUTERS):
        self._cache = cache or ReferenceCache()
        self.routers = tuple(routers)
        self._memo: dict[str, dict[str, Result]] = {}
        self._lock = threading.Lock()

    def with_oracle(self) -> ReferenceResults:
        """The same reference results with the oracle beside the production
        routers (for tables; proposers hear of the oracle only in the
        feedback's text, as the ceiling)."""
        return ReferenceResults(self._cache, routers=(*self.routers, ORACLE))

    def results(self, example: ScenarioExample) -> Mapping[str, Result]:
        with self._lock:
            known = self._memo.get(example.content_hash)
        if known is not None:
            return known
        found = {r: self._cache.result(example.path, r) for r in self.routers}
        with self._lock:
            self._memo[example.content_hash] = found
        return found

    def prepare(self, examples: Sequence[ScenarioExample], *,
                say: Callable[[str], None] | None = None) -> None:
        """Build what the examples' missing results need: the reference
        binary (lnd's stack) and the bridges of bridged routers (LDK's), each
        compiled once on a machine, for minutes with no scenario done (`say`
        hears a heartbeat)."""
        if all(self._cache.cached(ex.path, r) for ex in examples for r in self.routers):
            return
        with heartbeat(say, "building the reference binary (lnd's routing stack; the "
                       "first run on a machine compiles it once, for several minutes)"):
            self._cache.binary()
        bridges = {b.option: b for r in self.routers if (b := bridge_of(r)) is not None}
        for bridge in bridges.values():
            with heartbeat(say, f"building {bridge.building}"):
                bridge.binary()

    def precompute(
        self,
        examples: Sequence[ScenarioExample],
        *,
        workers: int | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        """Make sure every example's references exist (in parallel): build
        what they need (`prepare`), then run them on every scenario; `say`
        hears of each scenario done."""
        self.prepare(examples, say=say)
        done = 0
        lock = threading.Lock()

        def one(example: ScenarioExample) -> None:
            nonlocal done
            self.results(example)
            with lock:
                done += 1
                if say is not None:
                    say(f"references: {done}/{len(examples)} ({example.name})")

        with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as pool:
            list(pool.map(one, examples))
