"""The `realnet` commands."""

from __future__ import annotations

import click

from routesim_evolve.build.gomodule import GoToolchainError
from routesim_evolve.realnet.build import RealnetBuildError, real_binaries


@click.group("realnet")
def realnet_command() -> None:
    """Real lnd and btcd on a regtest network (docs/realnet.md)."""


@realnet_command.command("build")
def build_command() -> None:
    """Build real lnd, lncli, btcd and btcctl from the Go module proxy, once,
    into the project cache, and print where they are."""
    try:
        bins = real_binaries(say=lambda m: click.echo(m, err=True))
    except (RealnetBuildError, GoToolchainError) as exc:
        click.echo(f"realnet build: {exc}", err=True)
        raise SystemExit(2) from exc
    for path in bins.all():
        click.echo(str(path))
