"""How a scenario's world is laid out on real nodes (routesim_evolve/realnet/world.py),
without starting any: the world read from the trusted worldstart tool, and each
channel's opening plan (who funds it, what is pushed) with every change from the
simulator's world noted."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from routesim_evolve.layout import PROJECT_ROOT
from routesim_evolve.realnet.world import (
    ANCHOR_RESERVE_MAX_SAT,
    ANCHOR_RESERVE_PER_CHANNEL_SAT,
    FUNDER_FLOOR_SAT,
    ChannelStart,
    WorldStart,
    _plan,
    _small_slot_nodes,
    anchor_reserves,
    world_start,
)

EXAMPLE = PROJECT_ROOT / "docs" / "examples" / "base-example.json"
A, B = "02" + "a" * 64, "03" + "b" * 64


def _channel(local: tuple[int, int], funder: int, slots: tuple[int, int] = (483, 483)
             ) -> ChannelStart:
    return ChannelStart(scid="1x2x3", nodes=(A, B), capacity_msat=sum(local), local_msat=local,
                        funder=funder, slot_limit=slots, busy_slots=(0, 0), policies=(None, None))


def test_world_start_reads_the_simulators_world() -> None:
    start = world_start(Path(EXAMPLE))
    assert start.channels
    for c in start.channels:
        assert sum(c.local_msat) == c.capacity_msat
        assert c.funder in (0, 1)  # the example plays the rules: a funder is drawn


def test_the_simulators_funder_pushes_the_other_sides_balance() -> None:
    changes: list[str] = []
    plan = _plan(_channel((700_000_000, 300_000_000), funder=0), changes)
    assert (plan.funder, plan.other, plan.capacity_sat, plan.push_sat) == (A, B, 1_000_000, 300_000)
    assert changes == []


def test_a_funder_too_poor_to_pay_its_commitment_is_swapped_and_noted() -> None:
    changes: list[str] = []
    poor = (FUNDER_FLOOR_SAT - 1) * 1000
    plan = _plan(_channel((poor, 1_000_000_000 - poor), funder=0), changes)
    assert plan.funder == B and plan.push_sat == poor // 1000
    assert len(changes) == 1 and "funder is end 1" in changes[0]


def test_a_funder_keeps_the_anchor_reserve_of_every_channel_it_has() -> None:
    """lnd refuses an open that leaves the wallet short of the reserve for every
    anchor channel of the node, the ones opened to it too (a seed-13 drift world
    failed so: `reserved wallet balance invalidated`)."""
    hub, leaves = "02" + "c" * 64, [f"03{k:064x}" for k in range(12)]
    changes: list[str] = []
    plan = _plan(_channel((700_000_000, 300_000_000), funder=0), changes)
    to_hub = [replace(plan, funder=leaf, other=hub) for leaf in leaves]
    own = replace(plan, funder=hub, other=leaves[0])
    reserves = anchor_reserves([*to_hub[:3], own])
    assert reserves[hub] == 4 * ANCHOR_RESERVE_PER_CHANNEL_SAT  # three opened to it, one its own
    assert reserves[leaves[0]] == 2 * ANCHOR_RESERVE_PER_CHANNEL_SAT
    assert reserves[leaves[1]] == ANCHOR_RESERVE_PER_CHANNEL_SAT
    assert set(reserves) == {hub, *leaves[:3]}  # only funders hold on-chain funds
    assert anchor_reserves([*to_hub, own])[hub] == ANCHOR_RESERVE_MAX_SAT  # lnd's cap


def test_small_slot_limits_belong_to_the_receiving_end() -> None:
    # Direction 0 (A to B) may carry 30 HTLCs: B accepts 30.
    assert _small_slot_nodes_of((30, 483)) == {B: 30}
    assert _small_slot_nodes_of((483, 0)) == {}


def _small_slot_nodes_of(slots: tuple[int, int]) -> dict[str, int]:
    start = WorldStart(file="x", source=A, channels=[_channel((1, 1), 0, slots)], flaky_nodes=[])
    return _small_slot_nodes(start)


def test_world_start_lists_the_simulators_traffic_to_the_last_payments_latest_end() -> None:
    drift = PROJECT_ROOT / "corpus" / "test" / "drift-001.json"
    start = world_start(drift)
    from routesim_evolve.corpus.load import load_scenario

    sc = load_scenario(drift).scenario
    # A payment starts at its slot or when the one before ended; each round
    # (an attempt at least) takes the attempt latency.
    rounds = sum(p.max_attempts or sc.defaults.max_attempts for p in sc.payments)
    last = ((len(sc.payments) - 1) * sc.clock.payment_interval_s
            + rounds * sc.clock.attempt_latency_s)
    assert start.traffic, "the drift arena moves liquidity between payments"
    assert start.traffic[-1].at_s > (len(sc.payments) - 1) * sc.clock.payment_interval_s
    ends = {c.scid: set(c.nodes) for c in start.channels}
    times = [ev.at_s for ev in start.traffic]
    assert times == sorted(times) and times[0] > 0 and times[-1] <= last
    for ev in start.traffic:
        assert {ev.from_, ev.to} == ends[ev.scid]  # over the channel, from one end to the other
        assert start.source not in ends[ev.scid]  # others' payments: never the sender's channel
        assert ev.amount_msat > 0
    assert world_start(EXAMPLE).traffic == []  # no traffic in the base example
