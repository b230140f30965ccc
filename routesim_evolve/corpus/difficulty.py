"""Payments sized by what the network holds: the generator's difficulty.

With `ArenaSettings.amount_share` set, a scenario's payments are not drawn
from the amount range alone. The generator first writes the scenario with a
pool of candidate targets (`POOL_PER_PAYMENT` per payment), asks the Go tool
`maxflow` for the largest amount the sender could send to each of them in
the scenario's world at the start (a max flow over the true balances, before
any payment: `sim.World.MaxFlowTo`), then sizes each payment as a share of
its target's flow, the share drawn uniformly from `amount_share`. A target
whose flow cannot hold a share within `amount_sat` is passed by for the next
in the pool. So most payments fit what the network holds when they are made,
and the hard part is finding where it holds it; earlier payments (and, in
drift, background traffic) still drain what later ones need, which the
feasible bound of each result accounts for (docs/scoring.md).

The flows are the world's at the start: that world is drawn from the
scenario's seed, the same one the simulator draws when it plays the
scenario.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, ValidationError

from routesim_evolve.build.gomodule import GoToolchainError
from routesim_evolve.build.tools import SIMULATOR_PACKAGES, GoTool, run_tool
from routesim_evolve.corpus.schema import Payment
from routesim_evolve.corpus.settings import ArenaSettings

#: maxflow and the packages it is built from.
MAXFLOW = GoTool(
    name="maxflow",
    main=Path("cmd/maxflow"),
    packages=(Path("cmd/maxflow"), *SIMULATOR_PACKAGES),
)

#: Candidate targets drawn per payment to be sized.
POOL_PER_PAYMENT: Final = 4


class _FileFlows(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    max_flow_msat: list[int]


class _FlowReport(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    ok: bool
    files: list[_FileFlows]


def candidate_pool(
    rng: random.Random, targets: Sequence[str], count: int, settings: ArenaSettings
) -> list[Payment]:
    """POOL_PER_PAYMENT candidate payments per payment to make, each to a
    reachable target, at the smallest amount until they are sized."""
    placeholder = round(settings.amount_sat.min) * 1000
    return [Payment(target=rng.choice(targets), amount_msat=placeholder)
            for _ in range(count * POOL_PER_PAYMENT)]


def starting_flows(paths: Sequence[str | os.PathLike[str]]) -> list[list[int]]:
    """For each scenario file, the max flow in msat from its sender to each
    payment's target in its world at the start (Go's `maxflow`). Raises
    GoToolchainError when the tool cannot be built or run."""
    proc = run_tool(MAXFLOW, ["--", *map(os.fspath, paths)], timeout=3600)
    if proc.returncode != 0:
        raise GoToolchainError(f"maxflow exited {proc.returncode}: {proc.stderr.decode()}")
    try:
        report = _FlowReport.model_validate_json(proc.stdout)
    except ValidationError as exc:
        raise GoToolchainError(f"maxflow printed an unreadable report: {exc}") from exc
    return [f.max_flow_msat for f in report.files]


def size_payments(
    pool: Sequence[Payment], flows: Sequence[int], settings: ArenaSettings, rng: random.Random
) -> list[Payment]:
    """The scenario's payments from its pool: each a share of its target's
    flow, drawn from `settings.amount_share`, in whole satoshis within
    `settings.amount_sat`. Pool entries are taken in order; one whose flow
    cannot hold the drawn share within the range is passed by. Should the
    pool run out, the rest go to the passed-by targets with the largest
    flows, their amounts brought into the range (then possibly over the
    flow)."""
    share = settings.amount_share
    if share is None or len(flows) != len(pool):
        raise ValueError("sizing needs amount_share and one flow per pool entry")
    low, high = round(settings.amount_sat.min), round(settings.amount_sat.max)
    count = len(pool) // POOL_PER_PAYMENT
    sized: list[Payment] = []
    passed: list[tuple[Payment, int]] = []
    drawn: float | None = None  # the share of the payment being sized
    for payment, flow in zip(pool, flows, strict=True):
        if len(sized) == count:
            break
        if drawn is None:
            drawn = rng.uniform(share.min, share.max)
        sat = int(drawn * flow) // 1000
        if low <= sat <= high:
            sized.append(_sized(payment.target, sat, flow))
            drawn = None
        else:
            passed.append((payment, flow))
    for payment, flow in sorted(passed, key=lambda e: -e[1])[:count - len(sized)]:
        sat = min(max(int(rng.uniform(share.min, share.max) * flow) // 1000, low), high)
        sized.append(_sized(payment.target, sat, flow))
    return sized


def _sized(target: str, sat: int, flow: int) -> Payment:
    """A payment of `sat` to a target whose flow is `flow` msat, with its
    share of it kept, so that a world drawn under a secret can size it the
    same way (corpus/worlds.py); none when there was no flow to share."""
    return Payment(target=target, amount_msat=sat * 1000,
                   amount_share=sat * 1000 / flow if flow > 0 else None)
