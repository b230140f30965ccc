"""The evolve command's body: choose proposers, name the run, run, print."""

from __future__ import annotations

import datetime
from pathlib import Path

import click

from routesim_evolve.build.gomodule import GoToolchainError, require_modules
from routesim_evolve.cli_error import RunStopped, UserError
from routesim_evolve.corpus.load import CorpusError, load_manifest
from routesim_evolve.corpus.worlds import WorldsChanged
from routesim_evolve.evolve.budget import BudgetTooSmall
from routesim_evolve.evolve.driver import evolve
from routesim_evolve.evolve.rotation import ProposalsKeepFailing
from routesim_evolve.evolve.seed import SeedError
from routesim_evolve.propose.agentic import run_jail
from routesim_evolve.propose.base import Proposer
from routesim_evolve.propose.factory import backend_of, build_proposers
from routesim_evolve.reflect.cli_backend import ClaudeCLIBackend
from routesim_evolve.reflect.cost import CostLedger, unpriced_models
from routesim_evolve.reflect.errors import BackendUnavailable
from routesim_evolve.reflect.pricing import PricesError, load_prices
from routesim_evolve.reflect.prompts import DEFAULT_PACK, PromptError, PromptPack, read_lessons
from routesim_evolve.reflect.spec import LMSpec, LMSpecError, detect_default, parse_lm_spec
from routesim_evolve.report.heldout import (
    render_pairs,
    render_sanity,
    render_table,
    render_verdict,
)
from routesim_evolve.runs.settings import EvolveSettings
from routesim_evolve.runs.stamp import ScoringChanged
from routesim_evolve.simulate.routers import ORACLE


def run_evolution(settings: EvolveSettings) -> None:
    """Run one evolution as the command line set it up (an empty
    `reflection` is detected here) and print where the best candidate is
    and how it did."""
    try:
        require_modules()
        manifest = load_manifest(settings.corpus)
        specs = _specs(tuple(settings.reflection))
        pack = PromptPack(manifest, degraded=settings.degraded,
                          pack_dir=settings.prompts or DEFAULT_PACK, lessons=read_lessons())
        ledger = CostLedger(load_prices(settings.prices))
    except (CorpusError, GoToolchainError, LMSpecError, PromptError, PricesError) as exc:
        raise UserError(str(exc)) from None
    settings = settings.model_copy(update={"reflection": [str(s) for s in specs]})
    try:
        proposers = build_proposers(specs, pack, run_jail(settings.run_dir), seed=settings.seed,
                                    options=settings.lm, meter=ledger)
        _preflight(proposers, ledger, settings.max_cost)
    except BackendUnavailable as exc:
        raise UserError(str(exc)) from None
    try:
        summary = evolve(settings, proposers, manifest=manifest, ledger=ledger,
                         say=lambda m: click.echo(m, err=True))
    except (BudgetTooSmall, ScoringChanged, SeedError, CorpusError, WorldsChanged) as exc:
        raise UserError(str(exc)) from None
    except ProposalsKeepFailing as exc:
        raise RunStopped(f"{exc}\nThe run is saved in {settings.run_dir}: fix the cause and "
                         f"run again with --name {settings.run_dir.name} to resume.") from None
    click.echo(f"\nBest candidate: {summary.best_path}")
    click.echo(f"Val score: {summary.best_val:.4f} (seed {summary.seed_val:.4f})")
    shown = " vs ".join(r for r in summary.test.routers if r != ORACLE)
    click.echo(f"\nHeld-out test ({shown}):\n")
    click.echo(render_table(summary.test))
    click.echo("\n" + render_sanity(summary.test))
    click.echo("\n" + render_pairs(summary.test))
    click.echo(f"\nReport: {summary.run_dir / 'report.md'}")
    click.echo("\nOn the held-out test split:\n" + render_verdict(summary.test))


def _preflight(proposers: list[Proposer], ledger: CostLedger, max_cost: float | None) -> None:
    """Every back-end can work (key, CLI, server, model), and with
    --max-cost every reply can be priced; raises BackendUnavailable."""
    backends = [b for p in proposers if (b := backend_of(p)) is not None]
    for backend in backends:
        click.echo(f"checking {backend.name}…", err=True)
        backend.preflight()
    if max_cost is None:
        return
    blind = unpriced_models(ledger.prices, [
        (b.name, b.model, isinstance(b, ClaudeCLIBackend)) for b in backends
    ])
    if blind:
        raise BackendUnavailable(
            f"--max-cost cannot see what {', '.join(blind)} costs: the price table has no "
            "entry for its model. Name the model in --reflection-lm and add its price with "
            "--prices FILE (see docs/llm.md)."
        )


def _specs(values: tuple[str, ...]) -> list[LMSpec]:
    if values:
        return [parse_lm_spec(v) for v in values]
    choice = detect_default()
    click.echo(choice.reason, err=True)
    return [choice.spec]


def default_run_name(corpus: Path, degraded: bool) -> str:
    """The corpus's name, `-degraded` if so, and the time: a new run dir."""
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{corpus.resolve().name}{'-degraded' if degraded else ''}-{stamp}"
