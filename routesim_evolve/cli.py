"""The command line: evolve (the default), eval, compare and corpus.

    python -m routesim_evolve --corpus corpus [--degraded] [--seed-file F] [--name N]
    python -m routesim_evolve eval --corpus corpus --split val FILE.go
    python -m routesim_evolve compare --corpus corpus --split test A.go B.go [--revalidate N]
    python -m routesim_evolve report RUN_DIR [--out FILE.html]
    python -m routesim_evolve corpus generate --out corpus ...

Each of the first three takes --executor ray [--ray-address HOST:PORT] to run
its pairs on a Ray cluster (docs/ray.md).
"""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import click
import orjson
from pydantic import ValidationError

from routesim_evolve.build.gomodule import GoToolchainError, require_modules
from routesim_evolve.build.source import NotSourceText, read_source
from routesim_evolve.cli_error import UserError
from routesim_evolve.corpus.commands import corpus_command
from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.corpus.load import CorpusError, load_manifest
from routesim_evolve.corpus.worlds import PUBLIC, WorldSecret
from routesim_evolve.evolve.registry import ACCEPTANCE_RULES, DEFAULT_ACCEPTANCE
from routesim_evolve.realnet.commands import realnet_command
from routesim_evolve.reflect.base import BackendOptions
from routesim_evolve.report.heldout import (
    render_axes,
    render_distance,
    render_pairs,
    render_sanity,
    render_scenarios,
    render_table,
)
from routesim_evolve.report.replay import heading, render_replay_check, worlds_line
from routesim_evolve.runs.settings import EvolveSettings
from routesim_evolve.score.compare import Comparison, compare_routers, replay_check
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.simulate.executor import (
    ExecutorKind,
    ExecutorSettings,
    open_executor,
)
from routesim_evolve.simulate.reference import ReferenceCache
from routesim_evolve.simulate.routers import (
    PRODUCTION_ROUTERS,
    REFERENCE_NAMES,
    in_words,
)
from routesim_evolve.simulate.sandbox import DEFAULT_LIMITS

SPLITS = click.Choice(["train", "val", "test"])


def _run_default(field: str) -> Any:
    """An option's default: the run settings' own (EvolveSettings)."""
    return EvolveSettings.model_fields[field].default


def _lm_default(field: str) -> Any:
    """An LM option's default: the back-end options' own (BackendOptions)."""
    return BackendOptions.model_fields[field].default


CORPUS = click.option(
    "--corpus",
    type=click.Path(exists=True, file_okay=False, path_type=Path),
    help="Corpus directory (train/, val/, test/, graphs/, manifest.json). Required.",
)
WORKERS = click.option(
    "--max-concurrency",
    "workers",
    type=click.IntRange(min=1),
    help="Scenarios evaluated at once. Default: the number of cores (with --executor ray, "
         "the cluster's CPUs).",
)
EXECUTOR = click.option(
    "--executor", type=click.Choice([k.value for k in ExecutorKind]),
    default=ExecutorSettings().kind.value, show_default=True,
    help="Where runs happen: this machine's pool, or a Ray cluster (docs/ray.md).",
)
RAY_ADDRESS = click.option(
    "--ray-address", metavar="HOST:PORT",
    help="The Ray cluster's head (with --executor ray). Default: $RAY_ADDRESS, a cluster "
         "started here by `ray start`, else a new Ray instance on this machine.",
)
TIMEOUT = click.option(
    "--timeout", type=click.FloatRange(min=1), default=_run_default("timeout"), show_default=True,
    help="Wall-clock seconds one candidate may run on one scenario.",
)


WORLD_SECRET = click.option(
    "--world-secret", metavar="public|random|HEX",
    help="The worlds played. Default (or random): hidden ones under a fresh secret, which "
         "the output names (a candidate that carries the corpus cannot replay them); HEX: "
         "those of that 64-hex-digit secret, to play a table again; public: the corpus's own, "
         "which such a candidate can replay, so every table says so "
         "(docs/scoring.md, 'Hidden worlds').",
)
CHECK_REPLAY = click.option(
    "--check-replay", is_flag=True,
    help="Also play the corpus's own worlds and show, per router, its score there minus in "
         "the hidden ones with a 95 % interval, paired by scenario. The reference routers "
         f"({in_words(REFERENCE_NAMES)}) are the control: a candidate whose difference "
         "exceeds the largest of theirs beyond noise is flagged (it may carry the corpus). "
         "Plays every scenario twice.",
)


def run_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """How eval and compare run their pairs: concurrency, time limit, executor,
    the worlds played."""
    return WORKERS(TIMEOUT(EXECUTOR(RAY_ADDRESS(WORLD_SECRET(CHECK_REPLAY(command))))))


def _fail(message: str) -> None:
    raise UserError(message)


def _executor_settings(executor: str, ray_address: str | None) -> ExecutorSettings:
    try:
        return ExecutorSettings(kind=ExecutorKind(executor), ray_address=ray_address)
    except ValidationError as exc:
        raise UserError(exc.errors()[0]["msg"].removeprefix("Value error, ")) from None


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@CORPUS
@click.option("--degraded", is_flag=True,
              help="Add the degraded-attribution addendum to the prompt (the corpus must "
                   "have an attribution arena).")
@click.option("--seed-file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Start from this candidate (e.g. a champion) instead of the in-tree seed.")
@click.option("--name", help="Run name; the run dir is RUNS/NAME. Re-using a name resumes it.")
@click.option("--runs", "runs_dir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("runs"), show_default=True, help="Where run dirs go.")
@click.option("--max-evals", type=click.IntRange(min=1),
              help="Budget in metric calls (one candidate on one scenario). "
                   "Default: 20 × the number of val scenarios.")
@click.option("--max-proposals", type=click.IntRange(min=1), help="Cap on candidate proposals.")
@WORKERS
@click.option("--reflection-lm", "reflection", multiple=True,
              help="Proposer: anthropic:MODEL[:EFFORT], openai:MODEL[:EFFORT], "
                   "openai-compatible:MODEL@URL, claude[:MODEL][:EFFORT], codex[:MODEL][:EFFORT] "
                   "(any but the last two may end in @URL for a gateway) or offline. Repeat "
                   "to give the rotation order. Default: detected (an API key, else an agent "
                   "CLI, else offline). See docs/llm.md.")
@click.option("--max-cost", type=click.FloatRange(min=0, min_open=True), metavar="USD",
              help="Stop the run cleanly once its LM replies have cost this much "
                   "(checked between iterations).")
@click.option("--prices", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Price table (JSON, docs/llm.md) whose entries override the bundled one.")
@click.option("--cache-ttl", type=click.Choice(["5m", "1h"]),
              default=_lm_default("cache_ttl"), show_default=True,
              help="How long Anthropic keeps the cached prompt prefix; 1h pays when "
                   "iterations take longer than five minutes.")
@click.option("--lm-idle-timeout", type=click.FloatRange(min=1),
              default=_lm_default("idle_timeout"), show_default=True,
              help="Seconds an LM request or agent may go without progress before it is "
                   "retried.")
@click.option("--adaptive/--no-adaptive", default=_run_default("adaptive"), show_default=True,
              help="Rotate to the next proposer when val stops improving.")
@click.option("--plateau-evals", type=click.IntRange(min=1),
              help="Metric calls without val improvement before rotating. "
                   "Default: 5 × the number of val scenarios.")
@click.option("--acceptance", type=click.Choice(sorted(ACCEPTANCE_RULES)),
              help="Which child is kept (docs/search.md): sequential, more train evidence "
                   "until an SPRT decides; paired, the minibatch's paired test; sum-rises, "
                   f"GEPA's own. Default: {DEFAULT_ACCEPTANCE}.")
@click.option("--held-out-evals", type=click.IntRange(min=1),
              help="Candidate evaluations the closing held-out table may spend on reseeded "
                   "draws of the test split until the best's comparisons detect ±0.02. "
                   "Default: half the search's budget (--max-evals).")
@click.option("--prompts", "prompts_dir", type=click.Path(exists=True, file_okay=False,
              path_type=Path), help="Prompt pack directory (default: prompts/default).")
@click.option("--seed", "rng_seed", type=int, default=_run_default("seed"), show_default=True,
              help="Seed of GEPA and the offline proposer.")
@TIMEOUT
@EXECUTOR
@RAY_ADDRESS
@click.option("--world-secret", "run_world_secret", metavar="public|HEX",
              help="The worlds the run plays: by default hidden ones under a fresh secret the "
                   "run keeps in its run dir; public: the corpus's own; 64 hex digits: those "
                   "of that secret (another run's, to replay it).")
@click.option("-v", "--verbose", is_flag=True, help="Log more.")
@click.pass_context
def main(ctx: click.Context, corpus: Path | None, degraded: bool, seed_file: Path | None,
         name: str | None, runs_dir: Path, max_evals: int | None, max_proposals: int | None,
         workers: int | None, reflection: tuple[str, ...], adaptive: bool,
         plateau_evals: int | None, acceptance: str | None, held_out_evals: int | None,
         prompts_dir: Path | None,
         rng_seed: int, timeout: float,
         executor: str, ray_address: str | None, verbose: bool, max_cost: float | None,
         prices: Path | None, cache_ttl: str, lm_idle_timeout: float,
         run_world_secret: str | None) -> None:
    """Evolve a Lightning payment router with GEPA, scored against lnd.

    Without a command: evolve from the seed on the corpus's train split,
    pick the best on val, and score it on held-out test against the seed
    and lnd's apriori and bimodal estimators.
    """
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")
    if ctx.invoked_subcommand is not None:
        return
    if corpus is None:
        _fail("--corpus is required (e.g. --corpus corpus); see --help")
    from routesim_evolve.evolve.run_command import default_run_name, run_evolution

    # Parsed here, at the edge: a malformed one stops before any work.
    wanted = _world_secret(run_world_secret) if run_world_secret is not None else None
    run_evolution(EvolveSettings(
        corpus=corpus, run_dir=runs_dir / (name or default_run_name(corpus, degraded)),
        degraded=degraded, seed_file=seed_file, max_evals=max_evals,
        max_proposals=max_proposals, max_concurrency=workers, seed=rng_seed,
        adaptive=adaptive, plateau_evals=plateau_evals, acceptance=acceptance,
        held_out_evals=held_out_evals, timeout=timeout,
        reflection=list(reflection), prompts=prompts_dir, max_cost=max_cost, prices=prices,
        lm=BackendOptions(cache_ttl=cache_ttl, idle_timeout=lm_idle_timeout),  # type: ignore[arg-type]
        executor=_executor_settings(executor, ray_address),
        world_secret=wanted,
    ))


@main.command("eval", help=f"Score one candidate on a split, beside "
                            f"{in_words(PRODUCTION_ROUTERS)}.")
@CORPUS
@click.option("--split", type=SPLITS, default="val", show_default=True)
@click.argument("candidate", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--scenarios", help="Only these scenarios of the split (comma-separated names).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the results as JSON here.")
@run_options
def eval_command(corpus: Path | None, split: str, candidate: Path, scenarios: str | None,
                 json_out: Path | None, workers: int | None, timeout: float, executor: str,
                 ray_address: str | None, world_secret: str | None,
                 check_replay: bool) -> None:
    """Score one candidate on a split, beside the production reference routers."""
    only = [n for n in scenarios.split(",") if n] if scenarios else None
    _compare(corpus, split, [candidate], json_out, workers, timeout, revalidate=0,
             with_pairs=False, only=only, executor=_executor_settings(executor, ray_address),
             worlds=_worlds(world_secret, check_replay))


@main.command("compare")
@CORPUS
@click.option("--split", type=SPLITS, default="test", show_default=True)
@click.argument("candidates", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--revalidate", type=click.IntRange(min=0), default=0, show_default=True,
              help="Also run N reseeded copies of each scenario (each one more paired sample).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the comparison as JSON here.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the tables and plots as one self-contained HTML page here.")
@run_options
def compare_command(corpus: Path | None, split: str, candidates: tuple[Path, ...],
                    revalidate: int, json_out: Path | None, html_out: Path | None,
                    workers: int | None, timeout: float, executor: str,
                    ray_address: str | None, world_secret: str | None,
                    check_replay: bool) -> None:
    """Compare routers pair by pair on held-out scenarios (and against lnd)."""
    comparison = _compare(corpus, split, list(candidates), json_out, workers, timeout,
                          revalidate, with_pairs=True,
                          executor=_executor_settings(executor, ray_address),
                          worlds=_worlds(world_secret, check_replay))
    if html_out is not None:
        from routesim_evolve.report.html import render_compare_report

        title = f"{' vs '.join(comparison.routers)} on {corpus}/{split}"
        _write_page(html_out, render_compare_report(comparison, title))


@main.command("report")
@click.argument("run_dir", type=click.Path(path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path),
              help="Where to write the page.  [default: RUN_DIR/report.html]")
@click.option("--corpus", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="The run's corpus, if not where RUN_DIR/settings.json says.")
def report_command(run_dir: Path, out: Path | None, corpus: Path | None) -> None:
    """Write a run's report as one self-contained HTML page (figures embedded)."""
    from routesim_evolve.report.html import render_run_report

    _write_page(out or run_dir / "report.html", render_run_report(run_dir, corpus))


def _write_page(path: Path, html: str) -> None:
    try:
        path.write_text(html)
    except OSError as exc:
        _fail(f"cannot write {path}: {exc.strerror}; choose another path")
    click.echo(f"wrote {path}", err=True)


def _world_secret(text: str) -> WorldSecret:
    try:
        return WorldSecret.parse(text)
    except ValueError as exc:
        raise UserError(f"--world-secret: {exc}") from None


class _Worlds(NamedTuple):
    """The worlds eval and compare play: under `secret`, which the user gave
    or a fresh one, and with --check-replay the corpus's own as well."""

    secret: WorldSecret
    given: bool
    check_replay: bool


def _worlds(world_secret: str | None, check_replay: bool) -> _Worlds:
    secret = _world_secret(world_secret or "random")
    if check_replay and secret.public:
        _fail("--check-replay compares the corpus's own worlds with hidden ones: leave "
              "--world-secret out (a fresh secret) or give a HEX one, not public")
    return _Worlds(secret, given=world_secret not in (None, "random"), check_replay=check_replay)


def _compare(corpus: Path | None, split: str, files: list[Path], json_out: Path | None,
             workers: int | None, timeout: float, revalidate: int, *, with_pairs: bool,
             executor: ExecutorSettings, worlds: _Worlds,
             only: list[str] | None = None) -> Comparison:
    if corpus is None:
        _fail("--corpus is required")
    names = _router_names(files)
    try:
        require_modules()
        load_manifest(corpus)
        examples = load_examples(corpus, split)
    except (CorpusError, GoToolchainError) as exc:
        _fail(str(exc))
    if only is not None:
        unknown = sorted(set(only) - {e.name for e in examples})
        if unknown:
            _fail(f"{corpus}/{split} has no scenario named {', '.join(unknown)}")
        examples = [e for e in examples if e.name in only]
    if not examples:
        _fail(f"{corpus}/{split} holds no scenario")
    try:
        sources = {name: read_source(path) for name, path in zip(names, files, strict=True)}
    except NotSourceText as exc:
        _fail(f"{exc}: not evaluated")
    runs_on = open_executor(executor, say=lambda m: click.echo(m, err=True))
    workers = workers or runs_on.slots()
    references = ReferenceResults(ReferenceCache(executor=runs_on))
    evaluator = Evaluator(references, limits=DEFAULT_LIMITS.but(timeout_s=timeout),
                          executor=runs_on)
    started = time.monotonic()
    click.echo(f"{len(sources)} candidate(s) on {len(examples)} {split} scenarios"
               + (f" × {revalidate + 1} seeds" if revalidate else "")
               + (", in hidden and in the corpus's own worlds" if worlds.check_replay else "")
               + " …", err=True)
    click.echo(worlds_line(worlds.secret, worlds.given))  # first: no table unexplained

    def play(secret: WorldSecret) -> Comparison:
        return compare_routers(sources, examples, evaluator, references, workers=workers,
                               revalidate=revalidate, secret=secret,
                               on_progress=lambda m: click.echo(m, err=True))

    comparison = play(worlds.secret)
    comparison.world_secret = "public" if worlds.secret.public else worlds.secret.key.hex()
    if worlds.check_replay:
        click.echo("the same routers in the corpus's own worlds, for the replay check …",
                   err=True)
        comparison.replay_check = replay_check(play(PUBLIC), comparison, sources)
    click.echo(f"done in {time.monotonic() - started:.1f}s", err=True)
    _print_tables(comparison, worlds.secret, with_pairs)
    click.echo("\n" + worlds_line(worlds.secret, worlds.given))
    click.echo(comparison.rules_played)
    if json_out is not None:
        json_out.write_bytes(orjson.dumps(comparison.model_dump(mode="json"),
                                          option=orjson.OPT_INDENT_2))
        click.echo(f"\nwrote {json_out}", err=True)
    return comparison


def _print_tables(comparison: Comparison, secret: WorldSecret, with_pairs: bool) -> None:
    """The tables of a comparison, each heading marked when the worlds are
    the corpus's own (replayable)."""
    for title, render in (("Per scenario: score (success)", render_scenarios),
                          ("Per arena", render_table),
                          ("Score axes, per arena", render_axes),
                          ("Distance to the oracle, by score axis", render_distance)):
        click.echo("\n" + heading(title, secret) + "\n\n" + render(comparison))
    click.echo("\n" + render_sanity(comparison))
    if with_pairs:
        click.echo("\n" + heading("Paired comparisons (per scenario)", secret) + "\n\n"
                   + render_pairs(comparison))
    if comparison.replay_check:
        click.echo("\n## Replay check: the corpus's own worlds minus hidden ones (per "
                   "scenario)\n\n" + render_replay_check(comparison.replay_check))


def _router_names(files: list[Path]) -> list[str]:
    """Names for candidate files: their stem, made unique and none a
    reference router's name (nor one that reads like lnd's)."""
    names: list[str] = []
    for f in files:
        name = f.stem
        while name in names or name in REFERENCE_NAMES or name.startswith("lnd-"):
            name = f"{f.parent.name}/{name}" if "/" not in name else name + "'"
        names.append(name)
    return names


main.add_command(corpus_command)
main.add_command(realnet_command)


if __name__ == "__main__":
    sys.exit(main())
