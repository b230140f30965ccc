"""The `realnet` commands."""

from __future__ import annotations

import contextlib
import json
import signal
import threading
import time
from pathlib import Path

import click

from routesim_evolve.build.gomodule import GoToolchainError
from routesim_evolve.corpus.load import CorpusError, load_scenario
from routesim_evolve.realnet.build import RealnetBuildError, real_binaries
from routesim_evolve.realnet.network import RealnetError, Regtest
from routesim_evolve.realnet.world import build_world, commit_fee_rate, world_start


@click.group("realnet")
def realnet_command() -> None:
    """Real lnd and btcd on a regtest network (docs/realnet.md)."""


@realnet_command.command("build")
def build_command() -> None:
    """Build real lnd, lncli, btcd and btcctl from the Go module proxy, once,
    into the project cache, and print where they are."""
    try:
        bins = real_binaries(say=_say)
    except (RealnetBuildError, GoToolchainError) as exc:
        click.echo(f"realnet build: {exc}", err=True)
        raise SystemExit(2) from exc
    for path in bins.all():
        click.echo(str(path))


@realnet_command.command("up")
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def up_command(scenario: Path) -> None:
    """Start a scenario's world on real nodes (one lnd per node, its channels,
    balances and policies), print the lncli command of each node, and keep it
    up until Ctrl-C; every process stops then."""
    _refuse_unplayable(scenario, "up")
    try:
        rate = commit_fee_rate(load_scenario(scenario).scenario)
        start = world_start(scenario)
        bins = real_binaries(say=_say)
    except (CorpusError, RealnetError, RealnetBuildError, GoToolchainError) as exc:
        click.echo(f"realnet up: {exc}", err=True)
        raise SystemExit(2) from exc
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    started = time.monotonic()
    try:
        with Regtest(bins, say=_say) as net:
            world = build_world(net, start, rate, say=_say)
            click.echo(f"realnet: {scenario.name} is up after {time.monotonic() - started:.0f} s "
                       f"in {net.root}; Ctrl-C stops it")
            for key, node in sorted(world.nodes.items(), key=lambda kv: kv[1].name):
                role = " (the sender)" if key == start.source else ""
                click.echo(f"  {node.name}{role} {key[:16]}…: {' '.join(node.cli_args())}")
            for change in world.changes:
                click.echo(f"  differs from the simulator: {change}")
            with contextlib.suppress(KeyboardInterrupt):
                stop.wait()
            world.close()
    except RealnetError as exc:
        click.echo(f"realnet up: {exc}", err=True)
        raise SystemExit(1) from exc


def _refuse_unplayable(scenario: Path, command: str) -> None:
    """Exit 2, naming each field, where real nodes cannot play the scenario."""
    from routesim_evolve.realnet.compare import unplayable

    try:
        problems = unplayable(load_scenario(scenario).scenario)
    except CorpusError as exc:
        click.echo(f"realnet {command}: {exc}", err=True)
        raise SystemExit(2) from exc
    for problem in problems:
        click.echo(f"realnet {command}: {scenario}: {problem}", err=True)
    if problems:
        raise SystemExit(2)


def _say(message: str) -> None:
    click.echo(message, err=True)


@realnet_command.command("play")
@click.argument("scenario", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.argument("routers", nargs=-1, required=True)
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write every payment and attempt, real and simulated, here.")
def play_command(scenario: Path, routers: tuple[str, ...], json_out: Path | None) -> None:
    """Play SCENARIO's payments on real nodes with each of ROUTERS (a candidate
    .go file, lnd-apriori or lnd-bimodal: lnd's own SendPaymentV2), each on a
    world of its own, and print each beside the simulator's run of the same
    scenario."""
    from routesim_evolve.realnet.agreement import format_table
    from routesim_evolve.realnet.compare import LND_ROUTERS, play_router, summary

    _refuse_unplayable(scenario, "play")
    for r in routers:
        if r not in LND_ROUTERS and not Path(r).is_file():
            click.echo(f"realnet play: router {r!r} is neither a candidate file nor one of "
                       f"{', '.join(LND_ROUTERS)}", err=True)
            raise SystemExit(2)
    try:
        bins = real_binaries(say=_say)
        plays = [play_router(scenario, r, bins, _say) for r in routers]
    except (RealnetError, RealnetBuildError, GoToolchainError) as exc:
        click.echo(f"realnet play: {scenario}: {exc}", err=True)
        raise SystemExit(1) from exc
    rows = [summary(p) for p in plays]
    click.echo("| router | payments | real success | sim success | real attempts/payment | "
               "sim attempts/payment | real fee msat | sim fee msat | s/payment | setup s |")
    click.echo("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        click.echo(f"| {r['router']} | {r['payments']} | {r['real_success']:.3f} | "
                   f"{r.get('sim_success', float('nan')):.3f} | "
                   f"{r['real_attempts_per_payment']:.2f} | "
                   f"{r.get('sim_attempts_per_payment', float('nan')):.2f} | "
                   f"{r['real_fee_msat']} | {r.get('sim_fee_msat', '')} | "
                   f"{r['real_seconds_per_payment']:.2f} | {r['setup_s']} |")
    for p in plays:
        if p.agreement:
            click.echo(f"{p.router}: {format_table(p.agreement)}")
    if json_out is not None:
        json_out.write_text(json.dumps([
            {"router": p.router, "changes": p.changes, "setup_s": p.setup_s,
             "real": [x.model_dump() for x in p.real],
             "agreement": [x.model_dump() for x in p.agreement],
             "sim": p.sim.model_dump(mode="json") if p.sim else None} for p in plays],
            indent=1))
