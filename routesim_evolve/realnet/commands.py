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
from routesim_evolve.realnet.build import RealnetBuildError, real_binaries
from routesim_evolve.realnet.network import RealnetError, Regtest
from routesim_evolve.realnet.world import build_world, world_start


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
    try:
        rules = json.loads(scenario.read_text()).get("rules") or {}
        rate = int(rules.get("commit_feerate_sat_per_kw", 253))
        start = world_start(scenario)
        bins = real_binaries(say=_say)
    except (OSError, ValueError, RealnetError, RealnetBuildError, GoToolchainError) as exc:
        click.echo(f"realnet up: {scenario}: {exc}", err=True)
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


def _say(message: str) -> None:
    click.echo(message, err=True)
