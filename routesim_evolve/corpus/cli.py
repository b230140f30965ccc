"""`corpus` commands: generate a corpus, validate one.

`corpus_command` is the click group the main CLI mounts
(`python -m routesim_evolve corpus generate|validate ...`);
`generate_command` is also run by `scripts/gen_scenarios.py`.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource
from pydantic import ValidationError

from routesim_evolve.build.gomodule import GoToolchainError
from routesim_evolve.cli_error import UserError
from routesim_evolve.corpus.generate import GenerationError, generate_corpus
from routesim_evolve.corpus.load import CorpusError, load_corpus
from routesim_evolve.corpus.schema import ARENAS, SPLITS, Arena
from routesim_evolve.corpus.settings import (
    DEFAULT_ATTRIBUTION,
    DEFAULT_DRIFT_EVENTS_PER_HOUR,
    DEFAULT_DRIFT_MEDIAN_SHIFT_SAT,
    ArenaSettings,
    AttributionRates,
    GeneratorSettings,
    GraphSpec,
    ImportedGraphSpec,
    SyntheticGraphSpec,
    default_arena_settings,
)


def _numbers(text: str, count: int, name: str) -> list[float]:
    parts = [p for p in text.replace(" ", "").split(",") if p]
    if len(parts) != count:
        raise click.BadParameter(
            f"want {count} comma-separated numbers, got {text!r}", param_hint=name
        )
    try:
        return [float(p) for p in parts]
    except ValueError as exc:
        raise click.BadParameter(f"not a number in {text!r}", param_hint=name) from exc


def _range(text: str, name: str) -> dict[str, float]:
    low, high = _numbers(text, 2, name)
    return {"min": low, "max": high}


# ---------------------------------------------------------------------------
# Settings from options: each option, when it applies, becomes an override of
# the common arena settings, an arena switch, or a corpus-level setting.


def _arena_overrides(params: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """Common ArenaSettings fields the options set."""
    simple = {
        "bimodal_scale_sat", "uniform_share", "stale_share", "stale_fee_rate_factor",
        "stale_base_fee_add_msat", "stale_cltv_add", "payment_interval_s", "attempt_latency_s",
        "max_parts", "max_attempts", "fee_limit_ppm", "fee_limit_base_msat",
        "final_cltv_delta", "cltv_limit_delta", "block_height", "start_time",
    }
    out: dict[str, Any] = {k: params[k] for k in simple if k in given}
    if "payments" in given:
        low, high = _numbers(params["payments"], 2, "--payments")
        out["payments"] = {"min": int(low), "max": int(high)}
    if "amount_sat" in given:
        out["amount_sat"] = _range(params["amount_sat"], "--amount-sat")
    if "local_balance_share" in given:
        text = params["local_balance_share"]
        out["local_balance_share"] = (
            None if text == "none" else _range(text, "--local-balance-share")
        )
    return out


def _arena_switches(arena: Arena, params: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """The settings that make an arena what it is, applied to that arena only."""
    if arena == "drift" and "drift" in given:
        events, shift = _numbers(params["drift"], 2, "--drift")
        return {"events_per_hour": events, "median_shift_sat": shift}
    if arena == "atomic_mpp":
        return {"atomic_mpp": True}
    if arena == "attribution" and "attribution" in given:
        stripped, before, after = _numbers(params["attribution"], 3, "--attribution")
        return {"attribution": AttributionRates(
            stripped_rate=stripped, shift_before_rate=before, shift_after_rate=after
        ).model_dump()}
    return {}


def _graph_specs(
    params: dict[str, Any], explicit: set[str], from_file: bool
) -> list[GraphSpec] | None:
    """The graphs the options ask for; None keeps the settings file's graphs.
    --import alone replaces the synthetic graphs, --nodes with it adds to them."""
    imports = list(params["import_files"])
    if from_file and "nodes" not in explicit and not imports:
        return None
    use_synthetic = "nodes" in explicit or not imports
    sizes = [p for p in params["nodes"].split(",") if p.strip()] if use_synthetic else []
    specs: list[GraphSpec] = [SyntheticGraphSpec(nodes=int(n)) for n in sizes]
    specs += [
        ImportedGraphSpec(
            file=f, format=params["import_format"], largest_component=not params["all_components"]
        )
        for f in imports
    ]
    return specs


def build_settings(params: dict[str, Any], explicit: set[str]) -> GeneratorSettings:
    """Settings from the options: a settings file (if any) overridden by the options
    `explicit`ly given on the command line; without a file, from every option."""
    from_file = bool(params.get("settings_file"))
    if from_file:
        base = GeneratorSettings.model_validate_json(Path(params["settings_file"]).read_bytes())
        given = explicit
    else:
        base = GeneratorSettings()
        given = set(params)
    chosen = (
        [a for a in ARENAS if a in params["arenas"].split(",")]
        if "arenas" in given else list(base.arenas)
    )
    common = _arena_overrides(params, given)
    arenas = {
        arena: ArenaSettings.model_validate({
            **base.arenas.get(arena, default_arena_settings(arena)).model_dump(),
            **common,
            **_arena_switches(arena, params, given),
        })
        for arena in chosen
    }
    update: dict[str, Any] = {"arenas": arenas}
    if "seed" in given:
        update["seed"] = params["seed"]
    if "split_sizes" in given:
        sizes = _numbers(params["split_sizes"], 3, "--split-sizes")
        update["split_sizes"] = {s: int(n) for s, n in zip(SPLITS, sizes, strict=True)}
    graphs = _graph_specs(params, explicit, from_file)
    if graphs is not None:
        update["graphs"] = graphs
    sender = {
        field: params[option]
        for option, field in (
            ("sender_min_channels", "min_channels"),
            ("sender_min_capacity_sat", "min_capacity_sat"),
            ("sender_exclude_top", "exclude_top_share"),
        )
        if option in given
    }
    if sender:
        update["sender"] = {**base.sender.model_dump(), **sender}
    return GeneratorSettings.model_validate({**base.model_dump(), **update})


def invocation() -> str:
    """The command line as a user would type it again."""
    program = Path(sys.argv[0])
    if program.name == "__main__.py":
        head = ["python", "-m", program.parent.name]
    elif program.suffix == ".py":
        head = ["python", os.path.relpath(program) if program.is_absolute() else str(program)]
    else:
        head = [program.name]
    return shlex.join([*head, *sys.argv[1:]])


# ---------------------------------------------------------------------------
# Commands


@click.group(name="corpus")
def corpus_command() -> None:
    """Make and check scenario corpora (train/val/test splits of scenario files)."""


@corpus_command.command(name="generate")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), required=False,
              help="Corpus directory to write (graphs/, train/, val/, test/, manifest.json).")
@click.option("--overwrite", is_flag=True,
              help="Replace the corpus already in --out (its JSON files are removed first).")
@click.option("--settings", "settings_file", type=click.Path(exists=True, dir_okay=False),
              help="Full generator settings as JSON (see --print-settings); options given on "
                   "the command line override it. Use it for per-arena settings.")
@click.option("--print-settings", is_flag=True,
              help="Print the resolved settings as JSON and exit without writing.")
@click.option("--seed", type=int, default=1, show_default=True,
              help="Master seed; every graph, sender, payment and scenario seed derives from it.")
@click.option("--nodes", default="500", show_default=True,
              help="Synthetic graph sizes, comma-separated: one calibrated synthetic graph per "
                   "entry (e.g. 400,700). Scenarios of an arena use the graphs in turn.")
@click.option("--import", "import_files", multiple=True, type=click.Path(exists=True),
              help="Import a real graph from an lncli describegraph or CLN listchannels JSON "
                   "dump (.json or .json.gz); repeatable; added after the synthetic graphs "
                   "when --nodes is given too, else instead of them.")
@click.option("--import-format", type=click.Choice(["auto", "lncli", "listchannels"]),
              default="auto", show_default=True, help="Format of the --import dumps.")
@click.option("--all-components", is_flag=True,
              help="Keep every connected component of imported graphs (default: the largest).")
@click.option("--arenas", default=",".join(ARENAS), show_default=True,
              help="Arenas to make scenarios for, comma-separated.")
@click.option("--split-sizes", default="2,2,2", show_default=True,
              help="Scenarios per arena in train,val,test.")
@click.option("--payments", default="15,25", show_default=True,
              help="MIN,MAX payments per scenario (uniform).")
@click.option("--amount-sat", default="10000,2000000", show_default=True,
              help="MIN,MAX payment amount in sat; amounts are log-uniform on the range.")
@click.option("--max-parts", type=int, default=16, show_default=True,
              help="MaxParts: shards in flight at once per payment.")
@click.option("--max-attempts", type=int, default=40, show_default=True,
              help="Attempts per payment.")
@click.option("--fee-limit-ppm", type=float, default=10_000, show_default=True,
              help="Fee limit rate: limit = base + amount × ppm / 10⁶.")
@click.option("--fee-limit-base-msat", type=int, default=10_000, show_default=True,
              help="Fee limit base in msat.")
@click.option("--final-cltv-delta", type=int, default=40, show_default=True,
              help="The receiver's final cltv delta.")
@click.option("--cltv-limit-delta", type=int, default=2016, show_default=True,
              help="Largest total time lock above the payment's start height.")
@click.option("--bimodal-scale-sat", type=float, default=300_000, show_default=True,
              help="Scale s of lnd's bimodal liquidity model for hidden balances.")
@click.option("--uniform-share", type=float, default=0.2, show_default=True,
              help="Share of channels whose hidden balance is uniform on [0, capacity] "
                   "instead of bimodal.")
@click.option("--local-balance-share", default="0.5,0.9", show_default=True,
              help="MIN,MAX share of capacity the sender holds on each own channel (drawn "
                   "uniformly), or 'none' to let the simulator draw uniform on [0, capacity].")
@click.option("--stale-share", type=float, default=0.05, show_default=True,
              help="Share of announced directions whose real policy is out of date.")
@click.option("--stale-fee-rate-factor", type=float, default=2.0, show_default=True,
              help="A stale fee rate really charges rate × this factor.")
@click.option("--stale-base-fee-add-msat", type=int, default=1000, show_default=True,
              help="A stale policy really charges this much more base fee.")
@click.option("--stale-cltv-add", type=int, default=40, show_default=True,
              help="A stale cltv delta is really this much larger.")
@click.option("--drift",
              default=f"{DEFAULT_DRIFT_EVENTS_PER_HOUR:.0f},{DEFAULT_DRIFT_MEDIAN_SHIFT_SAT:.0f}",
              show_default=True,
              help="EVENTS_PER_HOUR,MEDIAN_SHIFT_SAT of background traffic in the drift arena "
                   "(other arenas have none).")
@click.option("--attribution",
              default=",".join(str(v) for v in DEFAULT_ATTRIBUTION.model_dump().values()),
              show_default=True,
              help="STRIPPED,BEFORE,AFTER: shares of failures reported unreadable, blamed one "
                   "hop toward the sender, one hop toward the receiver, in the attribution "
                   "arena (other arenas report truthfully). Atomic MPP is on in the atomic_mpp "
                   "arena only.")
@click.option("--payment-interval-s", type=float, default=600, show_default=True,
              help="Virtual seconds between payment starts.")
@click.option("--attempt-latency-s", type=float, default=2, show_default=True,
              help="Virtual seconds one round of in-flight shards takes.")
@click.option("--block-height", type=int, default=800_000, show_default=True,
              help="Block height at the start time.")
@click.option("--start-time", default="2026-01-01T00:00:00Z", show_default=True,
              help="Virtual start time (RFC 3339).")
@click.option("--sender-min-channels", type=int, default=5, show_default=True,
              help="The sender has at least this many channels.")
@click.option("--sender-min-capacity-sat", type=int, default=10_000_000, show_default=True,
              help="The sender's channels hold at least this much capacity in total.")
@click.option("--sender-exclude-top", type=float, default=0.03, show_default=True,
              help="Share of best-connected nodes never chosen as sender.")
@click.pass_context
def generate_command(ctx: click.Context, **params: Any) -> None:
    """Generate a scenario corpus: graphs once under graphs/, scenarios per split
    and arena, and manifest.json stamping settings and real rates. Deterministic
    given the seed."""
    given = {
        name for name in params
        if ctx.get_parameter_source(name) is ParameterSource.COMMANDLINE
    }
    try:
        settings = build_settings(params, given)
    except ValidationError as exc:
        raise click.UsageError(f"invalid settings: {exc}") from exc
    if params["print_settings"]:
        click.echo(json.dumps(settings.model_dump(mode="json"), indent=1))
        return
    if not params["out_dir"]:
        raise click.UsageError("--out is required (unless --print-settings)")
    try:
        manifest = generate_corpus(
            settings, params["out_dir"], command=invocation(), overwrite=params["overwrite"]
        )
    except GenerationError as exc:
        raise UserError(str(exc)) from exc
    for split, entry in manifest.splits.items():
        counts = ", ".join(f"{a} {n}" for a, n in entry.counts_per_arena.items())
        click.echo(f"{split}: {len(entry.scenarios)} scenarios ({counts})")
    click.echo(f"wrote {params['out_dir']}/manifest.json")


@corpus_command.command(name="validate")
@click.argument("corpus_dir", type=click.Path(exists=True, file_okay=False))
def validate_command(corpus_dir: str) -> None:
    """Load every file of a corpus as the evaluator will, checked by the simulator's
    own reader; exit 2 naming the file and field of the first problem."""
    try:
        corpus = load_corpus(corpus_dir)
    except CorpusError as exc:
        click.echo(f"corpus: {exc}", err=True)
        sys.exit(2)
    except GoToolchainError as exc:
        click.echo(f"corpus: cannot check the files with the Go reader: {exc}", err=True)
        sys.exit(2)
    for split, scenarios in corpus.splits.items():
        counts = Counter(s.arena for s in scenarios)
        payments = sum(len(s.scenario.payments) for s in scenarios)
        click.echo(f"{split}: {len(scenarios)} scenarios, {payments} payments, {dict(counts)}")
    click.echo("ok")
