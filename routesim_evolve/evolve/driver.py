"""One evolution run: GEPA's optimize_anything in generalization mode.

train scenarios are the dataset GEPA reflects on, val picks the best, and the
held-out test split is scored at the end for the best candidate, the seed and
both lnd estimators, with the paired statistics of `compare`. Everything a
run writes lives in its run dir, and a killed run resumes from it: GEPA
reloads its state and our evaluation cache answers every pair already run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson
from gepa.optimize_anything import (
    EngineConfig,
    GEPAConfig,
    ReflectionConfig,
    TrackingConfig,
    optimize_anything,
)
from pydantic import BaseModel, Field

from routesim_evolve.corpus.load import load_manifest, load_split
from routesim_evolve.evolve.budget import EvalBudget
from routesim_evolve.evolve.resume import SearchState
from routesim_evolve.evolve.rotation import RotatingProposer
from routesim_evolve.evolve.runlog import RunLog, candidate_text
from routesim_evolve.evolve.seed import load_seed
from routesim_evolve.propose.base import Proposer
from routesim_evolve.reflect.base import BackendOptions
from routesim_evolve.reflect.cost import CostLedger
from routesim_evolve.reflect.pricing import load_prices
from routesim_evolve.report.heldout import (
    Comparison,
    compare_routers,
    examples_of,
    render_pairs,
    render_sanity,
    render_table,
)
from routesim_evolve.score.evaluator import Evaluator, LndReferences, Runner
from routesim_evolve.simulate.executor import ExecutorSettings, open_executor
from routesim_evolve.simulate.reference import ReferenceCache

log = logging.getLogger(__name__)


class EvolveSettings(BaseModel):
    """Everything that shapes a run (written to the run dir as settings.json)."""

    corpus: Path
    run_dir: Path
    degraded: bool = False
    seed_file: Path | None = None
    max_evals: int | None = Field(default=None, description="metric calls; None: 20 × |val|")
    max_proposals: int | None = None
    max_concurrency: int | None = Field(default=None,
                                        description="None: the executor's slots (cores)")
    minibatch: int = 3
    seed: int = 0
    adaptive: bool = True
    plateau_evals: int | None = Field(default=None, description="None: 5 × |val|")
    timeout: float = 60.0
    memory: int = 1 << 30
    reflection: list[str] = Field(default_factory=lambda: ["offline"])
    prompts: Path | None = Field(default=None, description="prompt pack; None: the default")
    lm: BackendOptions = BackendOptions()
    max_cost: float | None = Field(
        default=None, gt=0, description="USD; the run stops once its LM replies cost this much"
    )
    prices: Path | None = Field(default=None, description="a price table over the bundled one")
    executor: ExecutorSettings = ExecutorSettings()


class RunSummary(BaseModel):
    """What a finished run reports."""

    run_dir: Path
    best_path: Path
    best_val: float
    seed_val: float
    candidates: int
    metric_calls: int
    test: Comparison
    notes: list[str] = []
    cost: str = Field(default="", description="what the LM replies cost, as the ledger says it")


class _NullLogger:
    """GEPA's logger, silenced: our RunLog reports instead."""

    def log(self, *args: object, **kwargs: object) -> None:
        pass


def evolve(
    settings: EvolveSettings,
    proposers: Sequence[Proposer],
    *,
    ledger: CostLedger | None = None,
    say: Callable[[str], None] = print,
    runner: Runner | None = None,
) -> RunSummary:
    """Run GEPA on the corpus and score the best candidate on held-out test.
    `ledger` is the one the proposers' back-ends charge. Raises the
    dispatcher's fatal error (proposals that keep failing, a proposer's bug)
    once GEPA has stopped; the run dir then resumes."""
    ledger = ledger or CostLedger(load_prices(settings.prices))
    run_dir = settings.run_dir
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "settings.json").write_bytes(
        orjson.dumps(settings.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
    )
    load_manifest(settings.corpus)  # a corpus without a manifest fails here, early
    train = examples_of("train", load_split(settings.corpus, "train"))
    val = examples_of("val", load_split(settings.corpus, "val"))
    test = examples_of("test", load_split(settings.corpus, "test"))
    seed = load_seed(settings.seed_file)
    for note in seed.notes:
        say(note)

    executor = open_executor(settings.executor, say=say)
    workers = settings.max_concurrency or executor.slots()
    references = LndReferences(ReferenceCache(executor=executor))
    evaluator = Evaluator(references, cache_dir=run_dir / "evals", runner=runner,
                          timeout=settings.timeout, memory=settings.memory, executor=executor)
    minibatch = min(settings.minibatch, len(train))
    budget = EvalBudget(settings.max_evals or 20 * len(val), minibatch=minibatch,
                        val_size=len(val), spent=evaluator.recorded_runs)
    say(f"lnd reference results for {len(train) + len(val) + len(test)} scenarios "
        "(computed once, then cached)…")
    references.precompute([*train, *val, *test], workers=workers, say=say)
    plateau = settings.plateau_evals or 5 * len(val)
    dispatcher = RotatingProposer(proposers, adaptive=settings.adaptive, plateau_evals=plateau,
                                  spent=evaluator.recorded_runs)
    runlog = RunLog(run_dir, budget=budget, proposer=lambda: dispatcher.current.name,
                    ledger=ledger)
    search = SearchState(run_dir, seed=settings.seed, minibatch=minibatch, dispatcher=dispatcher,
                         ledger=ledger)
    if search.restore():
        say(f"resuming {run_dir}: the search goes on from its last saved iteration")
    config = GEPAConfig(
        engine=EngineConfig(
            run_dir=str(run_dir / "gepa"),
            seed=settings.seed,
            candidate_selection_strategy=search.selector,
            # The budget is ours (see budget.py): GEPA's own overruns.
            max_metric_calls=None,
            max_candidate_proposals=settings.max_proposals,
            # Our evaluator caches by content; GEPA 0.1.4's cache mixes up
            # train and val ids when both are given, so it stays off.
            cache_evaluation=False,
            raise_on_exception=False,
            parallel=workers > 1,
            max_workers=workers,
            frontier_type="hybrid",
            track_best_outputs=False,
            display_progress_bar=False,
            # Candidates are plain strings: the standard pickle saves the state.
            use_cloudpickle=False,
        ),
        reflection=ReflectionConfig(
            reflection_lm=None,
            custom_candidate_proposer=dispatcher,
            reflection_minibatch_size=minibatch,
            batch_sampler=search.sampler,
        ),
        tracking=TrackingConfig(logger=_NullLogger()),
        callbacks=[dispatcher, runlog, search],
        stop_callbacks=[
            budget,
            lambda state: dispatcher.exhausted() is not None,
            lambda state: dispatcher.fatal is not None,
            lambda state: _over_cost(settings.max_cost, ledger),
        ],
    )
    say(f"evolving from {seed.origin} with {', '.join(p.name for p in proposers)}: "
        f"{len(train)} train, {len(val)} val scenarios, budget {budget.limit} evaluations; "
        f"run dir {run_dir}")
    try:
        result = optimize_anything(
            seed_candidate=seed.source,
            evaluator=evaluator,
            dataset=list(train),
            valset=list(val),
            config=config,
        )
    finally:
        runlog.close()
    if dispatcher.fatal is not None:
        raise dispatcher.fatal
    spent = budget.used
    notes = list(seed.notes)
    if (why := dispatcher.exhausted()) is not None:
        notes.append(_stopped_early(why, budget))
        say(notes[-1])
    if _over_cost(settings.max_cost, ledger):
        notes.append(f"Stopped at the cost limit: the LM replies cost {ledger.describe()} of "
                     f"--max-cost ${settings.max_cost:.2f}, after {budget.used} of "
                     f"{budget.limit} evaluations.")
        say(notes[-1])
    best = candidate_text(result.best_candidate)
    best_path = run_dir / "best.go"
    best_path.write_text(best)
    best_val = float(result.val_aggregate_scores[result.best_idx])
    seed_val = float(result.val_aggregate_scores[0])
    say(f"best candidate {best_path}: val score {best_val:.4f} (seed {seed_val:.4f})")

    say(f"scoring best, seed and lnd on {len(test)} held-out test scenarios…")
    comparison = compare_routers(
        {"best": best, "seed": seed.source}, test, evaluator, references, workers=workers,
    )
    summary = RunSummary(
        run_dir=run_dir,
        best_path=best_path,
        best_val=best_val,
        seed_val=seed_val,
        candidates=len(result.candidates),
        metric_calls=spent,
        test=comparison,
        notes=notes,
        cost=ledger.describe(),
    )
    _write_report(summary, run_dir)
    return summary


def _over_cost(limit: float | None, ledger: CostLedger) -> bool:
    return limit is not None and ledger.total_usd >= limit


def _stopped_early(why: str, budget: EvalBudget) -> str:
    """What a run whose proposers ran dry says, once: why, and what would help."""
    return (
        f"Stopping early after {budget.used} of {budget.limit} evaluations: no proposer has "
        f"anything left that could move a score ({why}). To search further, give the run a "
        "language model (--reflection-lm anthropic:MODEL with ANTHROPIC_API_KEY set, "
        "openai:MODEL with OPENAI_API_KEY, or the claude or codex command-line agent), or "
        "start from a candidate that marks more knobs and strategy choices, e.g. "
        "--seed-file champions/probabilistic.go."
    )


def _write_report(summary: RunSummary, run_dir: Path) -> None:
    (run_dir / "report.json").write_bytes(
        orjson.dumps(summary.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
    )
    (run_dir / "report.md").write_text(render_report(summary) + "\n")


def render_report(summary: RunSummary) -> str:
    """The readable report of a run."""
    return "\n\n".join([
        f"# Evolution run {summary.run_dir.name}",
        f"Best candidate: `{summary.best_path}` — val score {summary.best_val:.4f} "
        f"(seed {summary.seed_val:.4f}); {summary.candidates} candidates kept, "
        f"{summary.metric_calls} evaluations. LM cost: {summary.cost or 'not recorded'}.",
        *summary.notes,
        "## Held-out test: per arena",
        render_table(summary.test),
        render_sanity(summary.test),
        "## Held-out test: paired comparisons (per scenario)",
        render_pairs(summary.test),
    ])
