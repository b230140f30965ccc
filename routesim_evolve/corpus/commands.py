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
from collections.abc import Callable
from pathlib import Path
from typing import Any, Final

import click
from click.core import ParameterSource
from pydantic import BaseModel, ValidationError

from routesim_evolve.build.gomodule import GoToolchainError
from routesim_evolve.cli_error import UserError
from routesim_evolve.corpus.arenas import arena_spec
from routesim_evolve.corpus.generate import GenerationError, generate_corpus
from routesim_evolve.corpus.load import CorpusError, load_corpus
from routesim_evolve.corpus.schema import ARENAS, SPLITS, Arena
from routesim_evolve.corpus.settings import (
    DIFFICULTIES,
    ArenaSettings,
    AttributionRates,
    FloatRange,
    GeneratorSettings,
    GraphSpec,
    ImportedGraphSpec,
    IntRange,
    SenderSettings,
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


# The common ArenaSettings fields the command sets, in the order --help shows
# them; each option's default is the model's (shown, never repeated here).
ARENA_OPTIONS: Final[tuple[tuple[str, str], ...]] = (
    ("payments", "MIN,MAX payments per scenario (uniform)."),
    ("amount_sat", "MIN,MAX payment amount in sat; amounts are log-uniform on the range "
                   "(with --amount-share, the range a sized amount must fall in)."),
    ("amount_share", "MIN,MAX share of the largest amount the sender could send to the "
                     "target at the scenario's start (a max flow over the true balances) that "
                     "each payment is sized at, drawn uniformly; or 'none' to draw amounts from "
                     "--amount-sat alone. See --difficulty."),
    ("max_parts", "MaxParts: shards in flight at once per payment."),
    ("max_attempts", "Attempts per payment."),
    ("fee_limit_ppm", "Fee limit rate: limit = base + amount × ppm / 10⁶."),
    ("fee_limit_base_msat", "Fee limit base in msat."),
    ("final_cltv_delta", "The receiver's final cltv delta."),
    ("cltv_limit_delta", "Largest total time lock above the payment's start height."),
    ("bimodal_scale_sat", "Scale s of lnd's bimodal liquidity model for hidden balances."),
    ("uniform_share", "Share of channels whose hidden balance is uniform on [0, capacity] "
                      "instead of bimodal."),
    ("local_balance_share", "MIN,MAX share of capacity the sender holds on each own channel "
                            "(drawn uniformly), or 'none' to let the simulator draw uniform on "
                            "[0, capacity]."),
    ("stale_share", "Share of announced directions whose real policy is out of date."),
    ("stale_fee_rate_factor", "A stale fee rate really charges rate × this factor."),
    ("stale_base_fee_add_msat", "A stale policy really charges this much more base fee."),
    ("stale_cltv_add", "A stale cltv delta is really this much larger."),
    ("payment_interval_s", "Virtual seconds between payment starts."),
    ("attempt_latency_s", "Virtual seconds one round of in-flight shards takes."),
    ("block_height", "Block height at the start time."),
    ("start_time", "Virtual start time (RFC 3339)."),
)
# SenderSettings fields as `--sender-*` options.
SENDER_OPTIONS: Final[tuple[tuple[str, str], ...]] = (
    ("min_channels", "The sender has at least this many channels."),
    ("min_capacity_sat", "The sender's channels hold at least this much capacity in total."),
    ("exclude_top_share", "Share of best-connected nodes never chosen as sender."),
)
_RANGES: Final = {"payments", "amount_sat", "amount_share", "local_balance_share"}
#: Ranges that 'none' turns off.
_OPTIONAL_RANGES: Final = {"amount_share", "local_balance_share"}
_ARENA: Final = ArenaSettings()
_SENDER: Final = SenderSettings()
_GENERATOR: Final = GeneratorSettings()
# The defaults --drift and --attribution show: their arenas' own.
_DRIFT: Final = arena_spec("drift").defaults
_ATTRIBUTION: Final = arena_spec("attribution").defaults["attribution"]


def _default(value: object) -> str:
    return f"  [default: {value}]"


def _plain(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else str(number)


def _range_text(value: IntRange | FloatRange | None) -> str:
    return "none" if value is None else f"{_plain(value.min)},{_plain(value.max)}"


def _model_options(
    model: type[BaseModel], defaults: BaseModel, table: tuple[tuple[str, str], ...], prefix: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator adding one option per (field, help) of `table`: named
    --PREFIX-FIELD, typed by the field (a range as text MIN,MAX), its
    default shown from `defaults` and left to the model (None here)."""

    def decorate(command: Callable[..., Any]) -> Callable[..., Any]:
        for field, text in reversed(table):
            name = f"{prefix}{field}"
            value = getattr(defaults, field)
            if field in _RANGES:
                kind, shown = str, _range_text(value)
            else:
                kind, shown = model.model_fields[field].annotation, value
            command = click.option("--" + name.replace("_", "-"), name, type=kind,
                                   help=text + _default(shown))(command)
        return command

    return decorate


arena_options = _model_options(ArenaSettings, _ARENA, ARENA_OPTIONS, "")
sender_options = _model_options(SenderSettings, _SENDER, SENDER_OPTIONS, "sender_")


def _arena_overrides(params: dict[str, Any], given: set[str]) -> dict[str, Any]:
    """Common ArenaSettings fields the options set."""
    out: dict[str, Any] = {}
    for field, _ in ARENA_OPTIONS:
        if field not in given:
            continue
        text, hint = params[field], "--" + field.replace("_", "-")
        if field == "payments":
            low, high = _numbers(text, 2, hint)
            out[field] = {"min": int(low), "max": int(high)}
        elif field in _OPTIONAL_RANGES and text == "none":
            out[field] = None
        elif field in _RANGES:
            out[field] = _range(text, hint)
        else:
            out[field] = text
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
    if "nodes" not in explicit and not imports:
        return None
    sizes = [p for p in params["nodes"].split(",") if p.strip()] if "nodes" in explicit else []
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
    base = (
        GeneratorSettings.model_validate_json(Path(params["settings_file"]).read_bytes())
        if from_file else GeneratorSettings()
    )
    given = explicit
    chosen = (
        [a for a in ARENAS if a in params["arenas"].split(",")]
        if "arenas" in given else list(base.arenas)
    )
    common = _arena_overrides(params, given)
    if params.get("difficulty"):
        if "amount_share" in given:
            raise click.UsageError("--difficulty and --amount-share both set the amount share: "
                                   "give one")
        preset = DIFFICULTIES[params["difficulty"]]
        common["amount_share"] = preset.amount_share.model_dump()
        common["rules"] = preset.rules.model_dump()
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
        field: params[f"sender_{field}"]
        for field, _ in SENDER_OPTIONS
        if f"sender_{field}" in given
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
@click.option("--seed", type=int, help="Master seed; every graph, sender, payment and scenario "
              f"seed derives from it.{_default(_GENERATOR.seed)}")
@click.option("--nodes", help="Synthetic graph sizes, comma-separated: one calibrated synthetic "
              "graph per entry (e.g. 400,700). Scenarios of an arena use the graphs in turn."
              + _default(",".join(str(g.nodes) for g in _GENERATOR.graphs
                                  if isinstance(g, SyntheticGraphSpec))))
@click.option("--import", "import_files", multiple=True, type=click.Path(exists=True),
              help="Import a real graph from an lncli describegraph or CLN listchannels JSON "
                   "dump (.json or .json.gz); repeatable; added after the synthetic graphs "
                   "when --nodes is given too, else instead of them.")
@click.option("--import-format", type=click.Choice(["auto", "lncli", "listchannels"]),
              default=ImportedGraphSpec.model_fields["format"].default, show_default=True,
              help="Format of the --import dumps.")
@click.option("--all-components", is_flag=True,
              help="Keep every connected component of imported graphs (default: the largest).")
@click.option("--arenas", help="Arenas to make scenarios for, comma-separated."
              + _default(",".join(_GENERATOR.arenas)))
@click.option("--split-sizes", help="Scenarios per arena in train,val,test."
              + _default(",".join(str(_GENERATOR.split_sizes[s]) for s in SPLITS)))
@arena_options
@click.option("--difficulty", type=click.Choice(list(DIFFICULTIES)),
              help="Size payments by what the network holds toward their targets: a preset "
                   "of --amount-share, "
                   + ", ".join(f"{name} {_plain(d.amount_share.min)}–{_plain(d.amount_share.max)}"
                               for name, d in DIFFICULTIES.items())
                   + " of the max flow; hard also plays harsher rules of real nodes (more "
                   "small-slot and busy nodes, flaky peers, lnd's highest commitment fee "
                   "rate: corpus/settings.py hard_rules). [default: none, amounts from "
                   "--amount-sat alone]")
@click.option("--drift", help="EVENTS_PER_HOUR,MEDIAN_SHIFT_SAT of background traffic in the "
              "drift arena (other arenas have none)."
              + _default(",".join(_plain(v) for v in _DRIFT.values())))
@click.option("--attribution",
              help="STRIPPED,BEFORE,AFTER: shares of failures reported unreadable, blamed one "
                   "hop toward the sender, one hop toward the receiver, in the attribution "
                   "arena (other arenas report truthfully). Atomic MPP is on in the atomic_mpp "
                   "arena only."
                   + _default(",".join(str(v) for v in _ATTRIBUTION.values())))
@sender_options
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
    except GoToolchainError as exc:
        raise UserError(f"cannot run the Go tools the generator needs: {exc}") from exc
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
