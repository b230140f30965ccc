"""The evolve command's body: choose proposers, name the run, run, print."""

from __future__ import annotations

import datetime
from pathlib import Path

import click

from routesim_evolve.build.gomodule import GoToolchainError, require_modules
from routesim_evolve.cli_error import UserError
from routesim_evolve.corpus.load import CorpusError, load_manifest
from routesim_evolve.evolve.budget import BudgetTooSmall
from routesim_evolve.evolve.driver import EvolveSettings, evolve
from routesim_evolve.evolve.seed import SeedError
from routesim_evolve.propose.factory import build_proposers
from routesim_evolve.reflect.factory import BackendUnavailable
from routesim_evolve.reflect.prompts import DEFAULT_PACK, PromptError, PromptPack, read_lessons
from routesim_evolve.reflect.spec import LMSpec, LMSpecError, detect_default, parse_lm_spec
from routesim_evolve.report.heldout import render_pairs, render_sanity, render_table
from routesim_evolve.simulate.executor import ExecutorSettings


def run_evolution(
    *, corpus: Path, degraded: bool, seed_file: Path | None, name: str | None, runs_dir: Path,
    max_evals: int | None, max_proposals: int | None, workers: int | None,
    reflection: tuple[str, ...], adaptive: bool, plateau_evals: int | None,
    prompts_dir: Path | None, rng_seed: int, timeout: float, executor: ExecutorSettings,
) -> None:
    """Run one evolution and print where the best candidate is and how it did."""
    try:
        require_modules()
        manifest = load_manifest(corpus)
        specs = _specs(reflection)
        pack = PromptPack(manifest, degraded=degraded, pack_dir=prompts_dir or DEFAULT_PACK,
                          lessons=read_lessons())
    except (CorpusError, GoToolchainError, LMSpecError, PromptError) as exc:
        raise UserError(str(exc)) from None
    run_name = name or _default_name(corpus, degraded)
    settings = EvolveSettings(
        corpus=corpus, run_dir=runs_dir / run_name, degraded=degraded, seed_file=seed_file,
        max_evals=max_evals, max_proposals=max_proposals, max_concurrency=workers,
        seed=rng_seed, adaptive=adaptive, plateau_evals=plateau_evals, timeout=timeout,
        reflection=[str(s) for s in specs], executor=executor,
    )
    try:
        proposers = build_proposers(specs, pack, corpus, seed=rng_seed)
    except BackendUnavailable as exc:
        raise UserError(str(exc)) from None
    try:
        summary = evolve(settings, proposers, say=lambda m: click.echo(m, err=True))
    except (BudgetTooSmall, SeedError) as exc:
        raise UserError(str(exc)) from None
    click.echo(f"\nBest candidate: {summary.best_path}")
    click.echo(f"Val score: {summary.best_val:.4f} (seed {summary.seed_val:.4f})")
    click.echo("\nHeld-out test (best vs seed vs lnd-apriori vs lnd-bimodal):\n")
    click.echo(render_table(summary.test))
    click.echo("\n" + render_sanity(summary.test))
    click.echo("\n" + render_pairs(summary.test))
    click.echo(f"\nReport: {summary.run_dir / 'report.md'}")


def _specs(values: tuple[str, ...]) -> list[LMSpec]:
    if values:
        return [parse_lm_spec(v) for v in values]
    choice = detect_default()
    click.echo(choice.reason, err=True)
    return [choice.spec]


def _default_name(corpus: Path, degraded: bool) -> str:
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{corpus.resolve().name}{'-degraded' if degraded else ''}-{stamp}"
