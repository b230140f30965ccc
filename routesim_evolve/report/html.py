"""The HTML report: one self-contained page (figures embedded as PNG data
URIs, styles inline) of an evolution run, or of a `compare`.

    python -m routesim_evolve report RUN_DIR [--out FILE.html]
    python -m routesim_evolve compare --corpus corpus A.go B.go --html FILE.html
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import jinja2

from routesim_evolve.cli_error import UserError
from routesim_evolve.corpus.examples import ScenarioExample, load_examples
from routesim_evolve.corpus.load import CorpusError
from routesim_evolve.corpus.worlds import played_examples
from routesim_evolve.report import plots
from routesim_evolve.report.heldout import arena_rows, axis_rows, distance_rows, sanity_flags
from routesim_evolve.report.replay import recorded_worlds
from routesim_evolve.report.sizes import size_buckets
from routesim_evolve.runs.reader import (
    RunRecord,
    axis_points,
    candidate_evaluations,
    load_run,
)
from routesim_evolve.score.axes import SCORING_VERSION
from routesim_evolve.score.compare import Comparison, control_router
from routesim_evolve.score.evaluator import ReferenceResults, References
from routesim_evolve.simulate.result_format import PaymentResult

_ENV = jinja2.Environment(
    loader=jinja2.PackageLoader("routesim_evolve.report", "templates"),
    autoescape=True,
    undefined=jinja2.StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
)


def render_run_report(
    run_dir: Path, corpus: Path | None = None, references: References | None = None
) -> str:
    """The page of one run dir. The corpus (settings.json's unless given)
    tells which evaluations are val and test; lnd's and the oracle's results
    come from `references` (default: the reference cache, where the run put
    them)."""
    run = load_run(run_dir)
    corpus = corpus or run.settings.corpus
    val, test = _split(corpus, run_dir, "val"), _split(corpus, run_dir, "test")
    points = axis_points(run, val)
    context: dict[str, Any] = {
        "title": f"Evolution run {run_dir.resolve().name}",
        "run": run,
        "corpus": corpus,
        "best_val": max((p.best for p in run.val_points), default=None),
        "val_plot": plots.best_val_curve(run.val_points) if run.val_points else None,
        "lineage_plot": plots.lineage_plot(run.candidates),
        "axis_points": points,
        "pareto_plot": plots.pareto_plot(points) if points else None,
        "heldout": None,
        "sizes": None,
        "diff": source_diff(run.seed_source, run.best_source),
        "current_scoring": SCORING_VERSION,
    }
    if run.summary is not None:
        context["heldout"] = heldout_context(run.summary.test)
        sources = {"best": run.best_source, "seed": run.seed_source}
        context["sizes"] = sizes_context(run, sources, test, run.summary.test.routers,
                                         references or ReferenceResults().with_oracle())
    return _ENV.get_template("run.html.j2").render(**context)


def render_compare_report(comparison: Comparison, title: str) -> str:
    """The page of a `compare`: its tables and figures."""
    return _ENV.get_template("compare.html.j2").render(
        title=title, heldout=heldout_context(comparison),
        worlds=recorded_worlds(comparison.world_secret),
        public=comparison.world_secret == "public", replay=comparison.replay_check,
        control=control_router(comparison.replay_check))


def heldout_context(comparison: Comparison) -> dict[str, Any]:
    """The held-out tables and figures of a comparison."""
    rows = arena_rows(comparison)
    by_scenario: dict[str, dict[str, Any]] = {}
    for s in comparison.scores:
        by_scenario.setdefault(s.scenario, {"arena": s.arena})[s.router] = s
    return {
        "routers": comparison.routers,
        "rows": rows,
        "axes": axis_rows(comparison),
        "distance": distance_rows(comparison),
        "pairs": comparison.pairs,
        "flags": sanity_flags(comparison),
        "rules": comparison.rules_played,
        "scenarios": dict(sorted(by_scenario.items())),
        "arena_plot": plots.arena_bars(rows, comparison.routers),
        "pairs_plot": plots.pairs_plot(comparison.pairs) if comparison.pairs else None,
    }


def sizes_context(
    run: RunRecord, sources: Mapping[str, str], test: list[ScenarioExample],
    routers: Sequence[str], references: References,
) -> dict[str, Any]:
    """Success, attempts and fees by payment size on held-out test: the
    candidates from the run's evaluations, lnd and the oracle from the
    references."""
    payments: dict[str, list[PaymentResult]] = {}
    for name, source in sources.items():
        evals = candidate_evaluations(run, source, test)
        payments[name] = [p for ev in evals if ev.result for p in ev.result.payments]
    for ex in test:
        for router, result in references.results(ex).items():
            payments.setdefault(router, []).extend(result.payments)
    ordered = {r: payments[r] for r in routers if payments.get(r)}
    buckets = size_buckets(ordered)
    return {"buckets": buckets, "plot": plots.size_plot(buckets, list(ordered))}


def source_diff(seed: str, best: str) -> list[tuple[str, str]]:
    """The unified diff of best against the seed, as (css class, line)."""
    lines = difflib.unified_diff(seed.splitlines(), best.splitlines(), "seed.go", "best.go",
                                 lineterm="")
    return [(_diff_class(line), line) for line in lines]


def _diff_class(line: str) -> str:
    if line.startswith(("+++", "---")):
        return "file"
    return {"+": "add", "-": "del", "@": "hunk"}.get(line[:1], "")


def _split(corpus: Path, run_dir: Path, split: str) -> list[ScenarioExample]:
    if not corpus.is_dir():
        raise UserError(f"corpus {corpus} (named in {run_dir / 'settings.json'}) not found: "
                        "run from the directory the run was started in, or pass --corpus DIR")
    played = played_examples(run_dir, split)
    if played is not None:
        return played  # the run's hidden worlds (corpus/worlds.py)
    try:
        return load_examples(corpus, split)  # type: ignore[arg-type]
    except CorpusError as exc:
        raise UserError(str(exc)) from None
