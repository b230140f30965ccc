"""One evolution run: GEPA's optimize_anything in generalization mode.

train scenarios are the dataset GEPA reflects on, val picks the best, and the
held-out test split is scored at the end for the best candidate, the seed and
both lnd estimators, with the paired statistics of `compare`. Everything a
run writes lives in its run dir, and a killed run resumes from it: GEPA
reloads its state and our evaluation cache answers every pair already run.

The steps, in order: open the run dir and its data (`_open_run`), set up the
scoring (`_Scoring`), wire the search (`_Search`: budget, dispatcher, log,
resume state, GEPA's config), run it, then score the best candidate on the
held-out test split and write the report. Each step takes its own part of
the run's settings (runs/settings.py), not the whole.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson
from gepa.optimize_anything import (
    EngineConfig,
    GEPAConfig,
    ReflectionConfig,
    TrackingConfig,
    optimize_anything,
)

from routesim_evolve.build.gomodule import module_fingerprint
from routesim_evolve.build.trusted import first_mismatch
from routesim_evolve.corpus.examples import ScenarioExample, load_examples
from routesim_evolve.corpus.load import load_manifest
from routesim_evolve.corpus.manifest import Manifest
from routesim_evolve.corpus.worlds import resolve_run, run_secret
from routesim_evolve.evolve import registry
from routesim_evolve.evolve.budget import EvalBudget
from routesim_evolve.evolve.evidence import TrainEvidence
from routesim_evolve.evolve.judged import JudgedChild, judged_children, refused_note, render_judged
from routesim_evolve.evolve.registry import (
    acceptance_rule,
    confirmation_rule,
    rule_name,
    run_acceptance,
)
from routesim_evolve.evolve.resume import SearchState
from routesim_evolve.evolve.rotation import RotatingProposer
from routesim_evolve.evolve.rules import AcceptanceRule, ConfirmationRule, DrawsEvidence
from routesim_evolve.evolve.runlog import RunLog, candidate_text
from routesim_evolve.evolve.seed import Seed, check_seed_builds, load_seed
from routesim_evolve.propose.base import Proposer
from routesim_evolve.propose.eval_service import AGENT_EVALS, MinibatchEvaluations
from routesim_evolve.propose.offline import OfflineProposer
from routesim_evolve.reflect.cost import CostLedger
from routesim_evolve.reflect.pricing import load_prices
from routesim_evolve.report.heldout import (
    render_axes,
    render_distance,
    render_pairs,
    render_sanity,
    render_table,
    render_verdict,
)
from routesim_evolve.runs.settings import (
    DataSettings,
    EvolveSettings,
    RunSummary,
    ScoringSettings,
    SearchSettings,
)
from routesim_evolve.runs.stamp import claim_scoring
from routesim_evolve.score.compare import Comparison
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults, Runner
from routesim_evolve.score.resolve import Resolution, compare_until_resolved
from routesim_evolve.simulate.executor import open_executor
from routesim_evolve.simulate.reference import ReferenceCache

log = logging.getLogger(__name__)

Say = Callable[[str], None]


class _NullLogger:
    """GEPA's logger, silenced: our RunLog reports instead."""

    def log(self, *args: object, **kwargs: object) -> None:
        pass


@dataclass(frozen=True)
class _Data:
    """The corpus's three splits and the seed the run starts from."""

    train: list[ScenarioExample]
    val: list[ScenarioExample]
    test: list[ScenarioExample]
    seed: Seed


@dataclass(frozen=True)
class _Scoring:
    """Where runs happen and who scores them."""

    workers: int
    references: ReferenceResults
    evaluator: Evaluator
    # The agents' evaluation server's scorer, with its own cache.
    agents: MinibatchEvaluations


@dataclass(frozen=True)
class _Search:
    """GEPA's search as this run wires it."""

    budget: EvalBudget
    dispatcher: RotatingProposer
    runlog: RunLog
    config: GEPAConfig


def evolve(
    settings: EvolveSettings,
    proposers: Sequence[Proposer],
    *,
    manifest: Manifest | None = None,
    ledger: CostLedger | None = None,
    say: Say = print,
    runner: Runner | None = None,
    acceptance: AcceptanceRule | None = None,
    confirmation: ConfirmationRule | None = None,
) -> RunSummary:
    """Run GEPA on the corpus and score the best candidate on held-out test.
    `manifest` is the corpus's, when the caller read it already (the command
    line's prompt pack did); without it it is read here. `ledger` is the one
    the proposers' back-ends charge; `acceptance` the rule that keeps a child
    and `confirmation` the one that names the best (registry.py's defaults
    without them; a benchmark compares rules).
    Raises the dispatcher's fatal error (proposals that keep failing, a
    proposer's bug) once GEPA has stopped, the run dir then resumes; and
    TrustedFileChanged (exit 2) when a trusted binary or tool changed under
    the run."""
    ledger = ledger or CostLedger(load_prices(settings.prices))
    if manifest is None:
        # Only to fail early: a corpus without a manifest leaves no run dir.
        load_manifest(settings.corpus)
    data = _open_run(settings.data, say)
    settings = _named_acceptance(settings, acceptance, say)
    _write_settings(settings)
    scoring = _scoring(settings.scoring, data, runner, say)
    search = _search(settings.search, proposers, data, scoring, ledger, say,
                     acceptance or acceptance_rule(settings.search.acceptance))
    say(f"evolving from {data.seed.origin} with {', '.join(p.name for p in proposers)}: "
        f"{len(data.train)} train, {len(data.val)} val scenarios, budget "
        f"{search.budget.limit} evaluations; run dir {settings.run_dir}")
    try:
        result = optimize_anything(
            seed_candidate=data.seed.source,
            evaluator=scoring.evaluator,
            dataset=list(data.train),
            valset=list(data.val),
            config=search.config,
        )
    finally:
        search.runlog.close()
    # A trusted file changed under the run (build/trusted.py): GEPA caught
    # the error where it was met and stopped; nothing scored since is
    # trusted, so nothing is named best.
    tampered = first_mismatch()
    if tampered is not None:
        raise tampered
    if search.dispatcher.fatal is not None:
        raise search.dispatcher.fatal
    # Counted before the held-out test, whose evaluations land in the same
    # cache but are not the search's.
    spent = search.budget.used
    stopped = _stop_notes(settings.max_cost, search, ledger, proposers)
    for note in stopped:
        say(note)
    texts = [candidate_text(c) for c in result.candidates]
    # Each candidate's score on each val scenario, in data.val's order.
    per_val = [[float(sub.get(i, 0.0)) for i in range(len(data.val))]
               for sub in result.val_subscores]
    confirm = confirmation or confirmation_rule()
    confirmed = confirm(texts, per_val, data.val, scoring.evaluator, workers=scoring.workers)
    checked = confirmed.notes()
    for note in checked:
        say(note)
    best_idx = confirmed.named
    best = texts[best_idx]
    best_path = settings.run_dir / "best.go"
    best_path.write_text(best)
    best_val = float(result.val_aggregate_scores[best_idx])
    seed_val = float(result.val_aggregate_scores[0])
    say(f"best candidate {best_path}: val score {best_val:.4f} (seed {seed_val:.4f})")
    judged = judged_children(settings.run_dir / "log.jsonl")
    if best_idx == 0 and not stopped:
        stopped = [_nothing_found(spent, judged, proposers)]
        say(stopped[0])
    elif best_idx == 0 and (saw := refused_note(judged)):
        # Stopped early with nothing kept: what the acceptance refused too.
        stopped.append(saw)
        say(saw)
    parent = _parent(result.parents, best_idx)
    test, resolution = _held_out(best, texts[parent] if parent else None, data, scoring, say,
                                 settings.held_out_evals or search.budget.limit // 2)
    summary = RunSummary(
        run_dir=settings.run_dir,
        best_path=best_path,
        best_val=best_val,
        seed_val=seed_val,
        candidates=len(result.candidates),
        metric_calls=spent,
        test=test,
        notes=[*data.seed.notes, *stopped, *checked, resolution.note()],
        cost=ledger.describe(),
        judged=judged,
    )
    _write_report(summary, settings.run_dir)
    return summary


def _open_run(settings: DataSettings, say: Say) -> _Data:
    """Load the splits and the seed and check that it builds (a broken file
    or a seed that does not build fail here, early), then make the run dir,
    stamp its scoring version (refusing a run begun under another) and
    resolve the worlds every split is played in."""
    # The corpus and the seed first: a broken file, or a seed that does not
    # build (every evaluation would score 0), leaves no run dir behind.
    data = _Data(
        train=load_examples(settings.corpus, "train"),
        val=load_examples(settings.corpus, "val"),
        test=load_examples(settings.corpus, "test"),
        seed=load_seed(settings.seed_file),
    )
    check_seed_builds(data.seed)
    settings.run_dir.mkdir(parents=True, exist_ok=True)
    # Every split is played in worlds no candidate can replay (corpus/worlds.py).
    secret = run_secret(settings.run_dir, settings.world_secret)
    claim_scoring(settings.run_dir, simulator=module_fingerprint(include_candidate=False),
                  worlds=secret.rule)
    data = _Data(train=resolve_run(settings.run_dir, data.train, secret),
                 val=resolve_run(settings.run_dir, data.val, secret),
                 test=resolve_run(settings.run_dir, data.test, secret), seed=data.seed)
    for note in data.seed.notes:
        say(note)
    return data


def _named_acceptance(settings: EvolveSettings, given: AcceptanceRule | None,
                      say: Say) -> EvolveSettings:
    """The settings with the acceptance rule the run uses named (a rule
    object a benchmark gives by its kind), so settings.json says which
    judged its children and a resume keeps it (registry.py `run_acceptance`)."""
    if given is not None:
        return settings.model_copy(update={"acceptance": rule_name(given)})
    name = run_acceptance(settings.run_dir, settings.acceptance)
    if settings.acceptance is None and name != registry.DEFAULT_ACCEPTANCE:
        say(f"resuming under the acceptance rule the run began with, {name} "
            f"(--acceptance {registry.DEFAULT_ACCEPTANCE} for today's default)")
    return settings.model_copy(update={"acceptance": name})


def _write_settings(settings: EvolveSettings) -> None:
    """settings.json: the whole of what shaped the run, for the report and
    the agents' evaluation script to read back."""
    (settings.run_dir / "settings.json").write_bytes(
        orjson.dumps(settings.model_dump(mode="json"), option=orjson.OPT_INDENT_2)
    )


def _scoring(
    settings: ScoringSettings, data: _Data, runner: Runner | None, say: Say
) -> _Scoring:
    """The executor, lnd's results for every scenario (computed once, then
    cached) and the evaluator with the run's evaluation cache."""
    executor = open_executor(settings.executor, say=say)
    workers = settings.max_concurrency or executor.slots()
    references = ReferenceResults(ReferenceCache(executor=executor))
    # The oracle's results speak in the feedback (what the ceiling did).
    ceiling = references.with_oracle()
    evaluator = Evaluator(references, cache_dir=settings.run_dir / "evals", runner=runner,
                          limits=settings.limits, executor=executor, ceiling=ceiling)
    every = [*data.train, *data.val, *data.test]
    say(f"lnd reference results for {len(every)} scenarios (computed once, then cached)…")
    references.precompute(every, workers=workers, say=say)
    agents = MinibatchEvaluations(
        Evaluator(references, cache_dir=settings.run_dir / AGENT_EVALS, runner=runner,
                  limits=settings.limits, executor=executor, ceiling=ceiling),
        references, data.train, workers=workers)
    return _Scoring(workers=workers, references=references, evaluator=evaluator, agents=agents)


def _search(
    settings: SearchSettings, proposers: Sequence[Proposer], data: _Data, scoring: _Scoring,
    ledger: CostLedger, say: Say, acceptance: AcceptanceRule,
) -> _Search:
    """The budget, the proposal dispatcher, the run log and the resume state,
    and GEPA's configuration tying them together."""
    run_dir = settings.run_dir
    spent = scoring.evaluator.recorded_runs
    minibatch = min(settings.minibatch, len(data.train))
    budget = EvalBudget(settings.max_evals or 20 * len(data.val), minibatch=minibatch,
                        val_size=len(data.val), spent=spent)
    if isinstance(acceptance, DrawsEvidence):
        # A sequential rule plays a child beyond its minibatch, on the run's
        # evaluator (its cache, its budget), keeping the val pass a kept
        # child costs.
        acceptance.attach(TrainEvidence(
            data.train, scoring.evaluator, run_dir / "reseeded-train", workers=scoring.workers,
            allowance=lambda: budget.left - len(data.val),
            # The run log is made below, before any round is drawn.
            on_round=lambda note: runlog.progress(note)))
        # A resumed run's earlier decisions, so the prompt still tells them.
        acceptance.recall((c.child, c) for c in judged_children(run_dir / "log.jsonl")
                          if c.child)
    for proposer in proposers:
        proposer.attach_evaluations(scoring.agents)
        if isinstance(acceptance, DrawsEvidence):
            proposer.attach_acceptance(acceptance.account_of)
    dispatcher = RotatingProposer(proposers, adaptive=settings.adaptive,
                                  plateau_evals=settings.plateau_evals or 5 * len(data.val),
                                  spent=spent, verdict=lambda: acceptance.last)
    runlog = RunLog(run_dir, budget=budget, proposer=lambda: dispatcher.current.name,
                    ledger=ledger,
                    judged=acceptance.record if isinstance(acceptance, DrawsEvidence) else None)
    state = SearchState(run_dir, seed=settings.seed, minibatch=minibatch, dispatcher=dispatcher,
                        ledger=ledger)
    if state.restore():
        say(f"resuming {run_dir}: the search goes on from its last saved iteration")
    config = GEPAConfig(
        engine=EngineConfig(
            run_dir=str(run_dir / "gepa"),
            seed=settings.seed,
            candidate_selection_strategy=state.selector,
            # The budget is ours (see budget.py): GEPA's own overruns.
            max_metric_calls=None,
            max_candidate_proposals=settings.max_proposals,
            # The run's rule (registry.py) keeps a child on paired evidence,
            # the sequential one's beyond the minibatch, not a bare rise of
            # its sum.
            acceptance_criterion=acceptance,
            # Our evaluator caches by content; GEPA 0.1.4's cache mixes up
            # train and val ids when both are given, so it stays off.
            cache_evaluation=False,
            raise_on_exception=False,
            parallel=scoring.workers > 1,
            max_workers=scoring.workers,
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
            batch_sampler=state.sampler,
        ),
        tracking=TrackingConfig(logger=_NullLogger()),
        callbacks=[dispatcher, runlog, state],
        stop_callbacks=[
            budget,
            lambda _: dispatcher.exhausted() is not None,
            lambda _: dispatcher.fatal is not None,
            lambda _: _over_cost(settings.max_cost, ledger),
            lambda _: first_mismatch() is not None,
        ],
    )
    return _Search(budget=budget, dispatcher=dispatcher, runlog=runlog, config=config)


def _stop_notes(max_cost: float | None, search: _Search, ledger: CostLedger,
                proposers: Sequence[Proposer]) -> list[str]:
    """Why the search stopped before its budget, if it did."""
    notes = []
    if (why := search.dispatcher.exhausted()) is not None:
        notes.append(_stopped_early(why, search.budget, proposers))
    if _over_cost(max_cost, ledger):
        notes.append(f"Stopped at the cost limit: the LM replies cost {ledger.describe()} of "
                     f"--max-cost ${max_cost:.2f}, after {search.budget.used} of "
                     f"{search.budget.limit} evaluations.")
    return notes


def _held_out(best: str, parent: str | None, data: _Data, scoring: _Scoring,
              say: Say, allowed: int) -> tuple[Comparison, Resolution]:
    """The best candidate, its parent (when not the seed), the seed, lnd and
    the oracle on the test split, on as many reseeded draws of it as the
    best's comparisons need to detect ±0.02 within `allowed` candidate
    evaluations (score/resolve.py): a best worse than its parent there is
    said so by the verdict."""
    routers = {"best": best, **({"parent": parent} if parent is not None else {}),
               "seed": data.seed.source}
    say(f"scoring {', '.join(routers)} and lnd on {len(data.test)} held-out test scenarios "
        f"(more draws of them while the budget allows and the comparisons need)…")
    comparison, resolution = compare_until_resolved(
        routers, data.test, scoring.evaluator, scoring.references, focus="best",
        allowed=allowed, workers=scoring.workers)
    say(resolution.note())
    return comparison, resolution


def _parent(parents: Sequence[Sequence[int | None]], index: int) -> int | None:
    """The candidate `index` came from, when there is one (the seed has none)."""
    return next((p for p in parents[index] if p is not None), None) if index else None


def _over_cost(limit: float | None, ledger: CostLedger) -> bool:
    return limit is not None and ledger.total_usd >= limit


#: What helps a search that found nothing, in the run's own words.
_WHAT_HELPS = (
    "To search further, give the run a language model (--reflection-lm anthropic:MODEL "
    "with ANTHROPIC_API_KEY set, openai:MODEL with OPENAI_API_KEY, or the claude or codex "
    "command-line agent), or start from a candidate that marks more knobs and strategy "
    "choices, e.g. --seed-file champions/probabilistic.go."
)


def _stopped_early(why: str, budget: EvalBudget, proposers: Sequence[Proposer]) -> str:
    """What a run whose proposers ran dry says, once: why, and what would help."""
    return (f"Stopping early after {budget.used} of {budget.limit} evaluations: no proposer "
            f"has anything left that could move a score ({why}). {_what_helps(proposers)}")


def _what_helps(proposers: Sequence[Proposer]) -> str:
    """A language model is advised only to a run that had none."""
    if all(isinstance(p, OfflineProposer) for p in proposers):
        return _WHAT_HELPS
    return ("A larger --max-evals gives the acceptance more children to judge; another seed "
            "file (--seed-file) gives the model another start.")


def _nothing_found(spent: int, judged: Sequence[JudgedChild],
                   proposers: Sequence[Proposer]) -> str:
    """What a run says whose budget found nothing better than the seed: what
    its acceptance refused, and what would help (a language model only when
    the run had none)."""
    return " ".join(part for part in (
        f"No candidate beat the seed on val in {spent} evaluations.", refused_note(judged),
        _what_helps(proposers)) if part)


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
        *([f"## Children the acceptance judged\n\n{render_judged(summary.judged)}"]
          if summary.judged else []),
        "## Held-out test: per arena",
        render_table(summary.test),
        "## Held-out test: score axes, per arena",
        render_axes(summary.test),
        "## Held-out test: distance to the oracle, by score axis",
        render_distance(summary.test),
        render_sanity(summary.test),
        "## Held-out test: paired comparisons (per scenario)",
        render_pairs(summary.test),
        render_verdict(summary.test),
    ])
