"""A scenario played by each router on real nodes beside the simulator's run of
the same scenario: the `realnet play` command's body.

Each router gets a world of its own, built afresh from the scenario (payments
move liquidity, so a second router on the first one's network would meet
another world). The simulator plays the scenario as its file says (its own
seed, not a hidden world), so that both play the same starting balances.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from routesim_evolve.build.cache import build_candidate
from routesim_evolve.corpus.load import load_scenario
from routesim_evolve.corpus.schema import Scenario
from routesim_evolve.realnet.agreement import AgreementRow, agreement_table
from routesim_evolve.realnet.build import RealBinaries
from routesim_evolve.realnet.network import RealnetError, Regtest
from routesim_evolve.realnet.play import (
    CandidatePlayer,
    PaymentSpec,
    RealPayment,
    play_lnd,
    set_mission_control,
)
from routesim_evolve.realnet.traffic import RealTraffic
from routesim_evolve.realnet.world import RealWorld, build_world, commit_fee_rate, world_start
from routesim_evolve.simulate.reference import reference_result
from routesim_evolve.simulate.result_format import Result
from routesim_evolve.simulate.run_candidate import run_candidate
from routesim_evolve.simulate.sandbox import DEFAULT_LIMITS, network_isolation_available
from routesim_evolve.simulate.session import ServedProcess

Say = Callable[[str], None]

#: lnd's own routers on real nodes, by the names of the simulator's references.
LND_ROUTERS = {"lnd-apriori": "apriori", "lnd-bimodal": "bimodal"}

#: A served candidate's whole session: every payment of a scenario.
SESSION_LIMITS = DEFAULT_LIMITS.but(timeout_s=3600.0)


@dataclass
class RouterPlay:
    """One router on one scenario: on real nodes and in the simulator."""

    router: str
    real: list[RealPayment]
    sim: Result | None
    setup_s: float
    changes: list[str]
    #: The lnd and btcd processes the play started (all stopped when it returned).
    pids: list[int]
    #: The nodes' peak resident memory, summed, in MiB.
    peak_rss_mib: float
    #: What each background traffic event played moved, in msat (traffic.py).
    traffic_moved: list[int]
    #: Each real attempt beside the simulator's rules on the state it met
    #: (a served candidate's only: agreement.py).
    agreement: list[AgreementRow]


def unplayable(sc: Scenario) -> list[str]:
    """What of the scenario real nodes cannot play, each naming its field and
    what to set it to (empty when every part can be played)."""
    problems = []
    if sc.gossip.stale_share > 0:
        problems.append(f"gossip.stale_share is {sc.gossip.stale_share}: real nodes' gossip "
                        "carries the policies they apply; set it to 0")
    if sc.attribution.enabled:
        problems.append("attribution: honest real nodes attribute every failure truthfully; "
                        "set stripped_rate, shift_before_rate and shift_after_rate to 0")
    if not sc.atomic_mpp:
        problems.append("atomic_mpp is false: a real receiver holds every part until the "
                        "total arrives; set it to true")
    if sc.rules is not None and sc.rules.peers.flaky_share > 0:
        problems.append(f"rules.peers.flaky_share is {sc.rules.peers.flaky_share}: nodes "
                        "going offline are not played on real nodes; set it to 0")
    if sc.rules is not None and sc.rules.htlc_slots.busy_share > 0:
        problems.append(f"rules.htlc_slots.busy_share is {sc.rules.htlc_slots.busy_share}: "
                        "others' HTLCs are not held on real nodes; set it to 0")
    return problems


def payment_specs(sc: Scenario, world: RealWorld) -> list[PaymentSpec]:
    """The scenario's payments, targets named by their real keys."""
    d = sc.defaults
    return [PaymentSpec(index=i, target=world.real_key[p.target], amount_msat=p.amount_msat,
                        fee_limit_msat=p.fee_limit(d), max_parts=p.parts(d),
                        max_attempts=p.attempts(d), final_cltv_delta=d.final_cltv_delta,
                        cltv_limit_delta=d.cltv_limit_delta)
            for i, p in enumerate(sc.payments)]


def play_router(scenario: Path, router: str, bins: RealBinaries, say: Say) -> RouterPlay:
    """Build the scenario's world, play its payments with `router` (an lnd
    router's name or a candidate file), and run the simulator beside it."""
    sc = load_scenario(scenario).scenario
    if problems := unplayable(sc):
        raise RealnetError(f"{scenario}: real nodes cannot play it: {'; '.join(problems)}")
    start = world_start(scenario)
    source = None if router in LND_ROUTERS else Path(router).read_text()
    binary = None
    if source is not None:
        if not network_isolation_available():
            # With a network, the candidate could reach the nodes' gRPC on
            # 127.0.0.1 (their macaroons are files on this machine) and read
            # the very balances it is meant to learn.
            raise RealnetError(f"{router}: a candidate plays on real nodes only without "
                               "network access, and `unshare -n` fails on this machine")
        build = build_candidate(source)
        if not build.ok or build.binary is None:
            raise RealnetError(f"{router}: the candidate does not build: {build.message}")
        binary = build.binary
    # The simulator's play first: lnd's real payments keep its clock (_play_lnd).
    sim = (reference_result(scenario, router) if source is None
           else run_candidate(source, scenario).result)
    with Regtest(bins, say=say) as net:
        t0 = time.monotonic()
        world = build_world(net, start, commit_fee_rate(sc), say=say)
        setup = time.monotonic() - t0
        pids = net.pids()
        try:
            specs = payment_specs(sc, world)
            traffic = RealTraffic(world, start.traffic, sc.clock.payment_interval_s,
                                  sc.clock.attempt_latency_s)
            real = (_play_lnd(world, specs, traffic, LND_ROUTERS[router], _rounds(sim), say)
                    if binary is None else _play_candidate(world, specs, traffic, binary, say))
            memory = net.peak_rss_mib()
        finally:
            world.close()
    return RouterPlay(router=router if source is None else Path(router).name, real=real,
                      sim=sim, setup_s=setup, changes=world.changes, pids=pids,
                      peak_rss_mib=memory, traffic_moved=traffic.moved,
                      agreement=agreement_table(real))


def _play_lnd(world: RealWorld, specs: list[PaymentSpec], traffic: RealTraffic, estimator: str,
              rounds: list[int], say: Say) -> list[RealPayment]:
    """lnd's own payments. lnd shows no rounds, so the clock of the traffic
    moves as the simulator's lnd moved it: by its rounds on each payment."""
    set_mission_control(world.sender, estimator)
    out = []
    for spec in specs:
        traffic.before_payment(spec.index)
        out.append(play_lnd(world, spec))
        traffic.after_round(rounds[spec.index] if spec.index < len(rounds) else 0)
        say(_line(out[-1]))
    return out


def _rounds(sim: Result | None) -> list[int]:
    """How many rounds the simulator's router took on each payment."""
    if sim is None:
        return []
    return [max((a.round for a in p.attempt_log), default=-1) + 1 for p in sim.payments]


def _play_candidate(world: RealWorld, specs: list[PaymentSpec], traffic: RealTraffic,
                    binary: Path, say: Say) -> list[RealPayment]:
    out = []
    with tempfile.TemporaryDirectory(prefix="realnet-router-") as scratch, \
            ServedProcess(binary, ["--serve"], SESSION_LIMITS, Path(scratch)) as served:
        player = CandidatePlayer(world, served.ask, between_rounds=traffic.after_round)
        for spec in specs:
            traffic.before_payment(spec.index)
            out.append(player.play(spec))
            say(_line(out[-1]))
    return out


def _line(p: RealPayment) -> str:
    end = "settled" if p.success else f"failed ({p.failure_reason})"
    return (f"realnet: payment {p.index}: {end}, {p.attempts} attempts, {p.parts} parts, "
            f"{p.seconds:.1f} s")


def summary(play: RouterPlay) -> dict[str, Any]:
    """One row: real and simulated success, attempts and fees."""
    real = play.real
    n = max(len(real), 1)
    row: dict[str, Any] = {
        "router": play.router, "payments": len(real),
        "real_success": sum(p.success for p in real) / n,
        "real_attempts_per_payment": sum(p.attempts for p in real) / n,
        "real_fee_msat": sum(p.fee_msat for p in real),
        "real_seconds_per_payment": sum(p.seconds for p in real) / n,
        "setup_s": round(play.setup_s, 1),
        "traffic_events": len(play.traffic_moved),
        "traffic_moved_msat": sum(play.traffic_moved),
    }
    if play.sim is not None:
        t = play.sim.totals
        row.update(sim_success=t.success_rate, sim_attempts_per_payment=t.attempts_per_payment,
                   sim_fee_msat=t.fee_msat)
    return row
