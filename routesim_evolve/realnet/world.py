"""A scenario's world on real nodes: one lnd per scenario node, the
scenario's channels opened with their capacities, each side's starting
balance (the funder opens it and pushes the other side's share), and the
policies each node applies, with gossip waited for until the sender's graph
holds every channel as the scenario announces it.

The world is the simulator's own, read from the scenario by the trusted
`worldstart` tool (go/cmd/worldstart): the same hidden balances, funders and
HTLC slot limits the simulator plays. What real nodes cannot be given is
refused before anything starts (`playable`), and where lnd bends a value
(a funder that cannot pay its own commitment at the drawn balance, a policy
outside what lnd accepts) the change is kept in `RealWorld.changes`, so a
report can say how the real world differs from the simulated one.
"""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field

from routesim_evolve.build.tools import SIMULATOR_PACKAGES, GoTool, run_tool
from routesim_evolve.corpus.schema import Scenario
from routesim_evolve.realnet.network import LndNode, RealnetError, Regtest
from routesim_evolve.realnet.rpc import LndClient

#: worldstart and the packages it is built from.
WORLDSTART = GoTool(
    name="worldstart",
    main=Path("cmd/worldstart"),
    packages=(Path("cmd/worldstart"), Path("realnet"), *SIMULATOR_PACKAGES),
)

#: What a funder keeps beyond the other side's push, in sat: lnd refuses a
#: channel whose funder cannot pay its commitment and anchors with its
#: reserve left (anchor commitment at lnd's highest anchor fee rate, 10
#: sat/vB: about 2,810 sat, plus 660 sat of anchors, plus a margin).
FUNDER_FLOOR_SAT: Final = 5_000

#: On-chain margin per channel for the funding transaction's fee, in sat.
FUNDING_FEE_MARGIN_SAT: Final = 50_000

#: What lnd keeps in a node's wallet to fee-bump its anchor channels' closes,
#: per channel (every anchor channel of the node, whoever opened it) and at
#: most (lnwallet.AnchorChanReservedValue, MaxAnchorChanReservedValue): an
#: open that leaves less is refused (ErrReservedValueInvalidated).
ANCHOR_RESERVE_PER_CHANNEL_SAT: Final = 10_000
ANCHOR_RESERVE_MAX_SAT: Final = 100_000

#: The least cltv delta lnd accepts in a policy (lncfg.MinTimeLockDelta).
LND_MIN_CLTV_DELTA: Final = 24

#: lnd's commitment fee rate floor (chainfee.FeePerKwFloor), sat/kw: what its
#: estimator gives on regtest.
LND_FEE_FLOOR_SAT_PER_KW: Final = 253

#: lnd's largest channel without the wumbo feature (BOLT 02: 2^24 sat).
MAX_CHANNEL_SAT: Final = (1 << 24) - 1


class Policy(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    fee_base_msat: int
    fee_rate_ppm: int
    cltv_delta: int
    htlc_min_msat: int
    htlc_max_msat: int
    disabled: bool
    inbound_fee_base_msat: int
    inbound_fee_rate_ppm: int


class ChannelStart(BaseModel):
    """One channel as the world begins (go/cmd/worldstart's report)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scid: str
    nodes: tuple[str, str]
    capacity_msat: int
    local_msat: tuple[int, int]
    funder: int
    slot_limit: tuple[int, int]
    busy_slots: tuple[int, int]
    policies: tuple[Policy | None, Policy | None]


class Shift(BaseModel):
    """One background traffic event (go/cmd/worldstart's report): up to
    amount_msat paid by `from_` to `to` over the channel, at_s after the
    scenario's start."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    at_s: float
    scid: str
    from_: str = Field(alias="from")
    to: str
    amount_msat: int


class WorldStart(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    source: str
    channels: list[ChannelStart]
    flaky_nodes: list[str]
    traffic: list[Shift] = []


def commit_fee_rate(sc: Scenario) -> int:
    """The commitment fee rate the scenario's rules say (lnd's floor where it
    plays no rules)."""
    rules = sc.rules
    return rules.commit_feerate_sat_per_kw if rules is not None else LND_FEE_FLOOR_SAT_PER_KW


def world_start(scenario: Path) -> WorldStart:
    """The scenario's world as it begins, from the trusted worldstart tool."""
    done = run_tool(WORLDSTART, [str(scenario)], timeout=120)
    if done.returncode != 0:
        raise RealnetError(f"worldstart {scenario}: {done.stderr.decode(errors='replace').strip()}")
    report = json.loads(done.stdout)
    return WorldStart.model_validate(report["files"][0])


@dataclass
class RealWorld:
    """A scenario's world running on real nodes, with the maps between the
    scenario's names and the real ones."""

    net: Regtest
    start: WorldStart
    nodes: dict[str, LndNode]  # scenario key -> its lnd
    clients: dict[str, LndClient]  # scenario key -> its gRPC client
    real_key: dict[str, str]  # scenario key -> real key
    sim_key: dict[str, str]  # real key -> scenario key
    real_chan: dict[str, int] = field(default_factory=dict)  # scenario scid -> real chan_id
    sim_scid: dict[int, str] = field(default_factory=dict)  # real chan_id -> scenario scid
    chan_point: dict[str, str] = field(default_factory=dict)  # scenario scid -> funding outpoint
    changes: list[str] = field(default_factory=list)

    @property
    def sender(self) -> LndClient:
        return self.clients[self.start.source]

    def close(self) -> None:
        for client in self.clients.values():
            client.close()


Say = Callable[[str], None]


def build_world(net: Regtest, start: WorldStart, fee_rate_sat_per_kw: int,
                say: Say | None = None) -> RealWorld:
    """Start the nodes, fund them, open and announce the scenario's channels
    (about 2.5 minutes for 12 nodes and 25 channels on 2 cores)."""
    tell = say or (lambda _m: None)
    # Every channel is planned before any node starts: a channel real nodes
    # cannot open is refused at once, not after minutes of setting up.
    changes: list[str] = []
    plans = [_plan(c, changes) for c in start.channels]
    keys = sorted({k for c in start.channels for k in c.nodes} | {start.source})
    small = _small_slot_nodes(start)
    # The cap is in sat/vB; one below lnd's floor of 253 sat/kw leaves every
    # channel unable to add an HTLC ("below fee floor"), so it is rounded
    # up, to 2 sat/vB at least.
    fee_cap = max(2, -(-fee_rate_sat_per_kw // 250))
    nodes: dict[str, LndNode] = {}
    tell(f"realnet: starting {len(keys)} lnd nodes")
    for i, key in enumerate(keys):
        extra = [f"--max-commit-fee-rate-anchors={fee_cap}", "--maxpendingchannels=100"]
        if key in small:
            extra.append(f"--default-remote-max-htlcs={small[key]}")
        nodes[key] = net.add_node(f"n{i:02d}", extra_args=extra)
        if i == 0:
            # btcd restarts to mine to the first node (Regtest.fund): the
            # other nodes start after, so none has to ride out the restart.
            net.fund()
    clients = {k: LndClient(n.name, n.rpc_address, n.tls_cert, n.macaroon)
               for k, n in nodes.items()}
    world = RealWorld(net=net, start=start, nodes=nodes, clients=clients,
                      real_key={k: n.pubkey for k, n in nodes.items()},
                      sim_key={n.pubkey: k for k, n in nodes.items()}, changes=changes)
    _fund_funders(world, plans, tell)
    _open_channels(world, plans, tell)
    _set_policies(world, tell)
    _note_fee_rate(world, fee_rate_sat_per_kw)
    return world


def _note_fee_rate(world: RealWorld, scenario_rate: int) -> None:
    """Note where lnd's commitment fee rate is not the scenario's: on regtest
    lnd's estimator gives its floor (253 sat/kw, shown as 254), which the
    scenario's rules should then say for the two to play the same world."""
    sender = world.sender
    rates = {ch.fee_per_kw for ch in sender.call(
        sender.ln.ListChannels, sender.s.ln.ListChannelsRequest()).channels}
    if rates and rates != {scenario_rate}:
        world.changes.append(f"commitment fee rate {sorted(rates)} sat/kw on the sender's "
                             f"channels, not the scenario's {scenario_rate}")


@dataclass(frozen=True)
class _ChannelPlan:
    scid: str
    funder: str  # scenario key
    other: str
    capacity_sat: int
    push_sat: int


def _plan(c: ChannelStart, changes: list[str]) -> _ChannelPlan:
    """How to open c on real nodes: the simulator's funder pushes the other
    side's balance, unless the funder's own share cannot pay for the
    commitment (then the other side funds, and the change is noted)."""
    capacity = c.capacity_msat // 1000
    if capacity > MAX_CHANNEL_SAT:
        raise RealnetError(f"channel {c.scid}: {capacity} sat is above lnd's largest channel "
                           f"without wumbo ({MAX_CHANNEL_SAT} sat); generate smaller channels")
    funder = c.funder if c.funder in (0, 1) else 0
    if c.local_msat[funder] // 1000 < FUNDER_FLOOR_SAT:
        flipped = 1 - funder
        changes.append(f"{c.scid}: funder is end {flipped}, not {funder}: end {funder} holds "
                       f"{c.local_msat[funder] // 1000} sat, below what a funder must keep")
        funder = flipped
    other = 1 - funder
    push = min(c.local_msat[other] // 1000, capacity - FUNDER_FLOOR_SAT)
    if push != c.local_msat[other] // 1000:
        changes.append(f"{c.scid}: end {other} starts with {push} sat, not "
                       f"{c.local_msat[other] // 1000}: the funder keeps its floor")
    return _ChannelPlan(c.scid, c.nodes[funder], c.nodes[other], capacity, push)


def _small_slot_nodes(start: WorldStart) -> dict[str, int]:
    """Nodes whose max_accepted_htlcs is below lnd's 483: direction d of a
    channel offers HTLCs to end 1-d, whose limit is slot_limit[d]."""
    out: dict[str, int] = {}
    for c in start.channels:
        for d in (0, 1):
            limit = c.slot_limit[d]
            if 0 < limit < 483:
                out[c.nodes[1 - d]] = limit
    return out


def anchor_reserves(plans: list[_ChannelPlan]) -> dict[str, int]:
    """What each funder must keep in its wallet, in sat, to open its last
    channel: lnd counts every anchor channel of the node, opened by it or
    to it, so a node with many channels opened to it may fund one of its
    own only if it keeps the reserve for all of them."""
    channels = Counter(end for p in plans for end in (p.funder, p.other))
    return {key: min(ANCHOR_RESERVE_PER_CHANNEL_SAT * channels[key], ANCHOR_RESERVE_MAX_SAT)
            for key in sorted({p.funder for p in plans})}


def _fund_funders(world: RealWorld, plans: list[_ChannelPlan], tell: Say) -> None:
    """One on-chain output per channel, to its funder, in one transaction
    (lnd spends only confirmed outputs, so a funder opening several
    channels needs one output for each)."""
    first = next(iter(world.net.nodes.values()))
    outputs: dict[str, int] = {}
    wanted: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for p in plans:
        node = world.nodes[p.funder]
        address = node.cli("newaddress", "p2wkh")["address"]
        amount = p.capacity_sat + FUNDING_FEE_MARGIN_SAT
        outputs[address] = amount
        wanted[p.funder].append((address, amount))
    # Each funder's anchor reserve, an output no open spends.
    for key, amount in anchor_reserves(plans).items():
        address = world.nodes[key].cli("newaddress", "p2wkh")["address"]
        outputs[address] = amount
        wanted[key].append((address, amount))
    tell(f"realnet: funding {len(plans)} channels in one transaction")
    first.cli("sendmany", json.dumps(outputs), "--force")
    world.net.mine(6)
    for key in wanted:
        node = world.nodes[key]
        total = sum(a for _, a in wanted[key])
        world.net.wait_for(node, lambda n=node, t=total:
                           int(n.cli("walletbalance")["confirmed_balance"]) >= t)


def _open_channels(world: RealWorld, plans: list[_ChannelPlan], tell: Say) -> None:
    """Open every channel from its own funding output, then learn the real
    short channel id of each from the funding outpoint."""
    tell(f"realnet: opening {len(plans)} channels")
    used: set[tuple[str, int]] = set()
    for p in plans:
        funder, other = world.nodes[p.funder], world.nodes[p.other]
        world.net.connect(funder, other)
        client = world.clients[p.funder]
        utxo = _utxo_for(client, p.capacity_sat + FUNDING_FEE_MARGIN_SAT, used)
        req = client.s.ln.OpenChannelRequest(
            node_pubkey=bytes.fromhex(other.pubkey), local_funding_amount=p.capacity_sat,
            push_sat=p.push_sat, outpoints=[utxo], sat_per_vbyte=2)
        point = client.call(client.ln.OpenChannelSync, req)
        world.chan_point[p.scid] = f"{point.funding_txid_bytes[::-1].hex()}:{point.output_index}"
    world.net.mine(6)
    for key, node in world.nodes.items():
        world.net.wait_active(node, sum(1 for p in plans if key in (p.funder, p.other)))
    by_point = {v: k for k, v in world.chan_point.items()}
    for client in world.clients.values():
        for ch in client.call(client.ln.ListChannels, client.s.ln.ListChannelsRequest()).channels:
            if (scid := by_point.get(ch.channel_point)) is not None:
                world.real_chan[scid] = ch.chan_id
                world.sim_scid[ch.chan_id] = scid
    missing = [p.scid for p in plans if p.scid not in world.real_chan]
    if missing:
        raise RealnetError(f"channels not found open on any node: {', '.join(missing)}")


def _utxo_for(client: LndClient, amount: int, used: set[tuple[str, int]]) -> object:
    """The funder's confirmed output of exactly `amount` sat not used yet
    (an lnrpc.OutPoint)."""
    s = client.s
    unspent = client.call(client.ln.ListUnspent, s.ln.ListUnspentRequest(min_confs=1,
                                                                         max_confs=1 << 30))
    for u in unspent.utxos:
        key = (u.outpoint.txid_str, u.outpoint.output_index)
        if u.amount_sat == amount and key not in used:
            used.add(key)
            return s.ln.OutPoint(txid_str=key[0], output_index=key[1])
    raise RealnetError(f"{client.name}: no confirmed output of {amount} sat to fund a channel")


def _set_policies(world: RealWorld, tell: Say) -> None:
    """Each node applies the scenario's policy on each of its channels, and
    the sender's graph is waited for until it holds them all."""
    tell("realnet: setting every node's channel policies")
    # A policy set before its channel's announcement is complete does not
    # reach the network (lnd announces the channel later with the update it
    # made at the open): every channel is first seen in the sender's graph,
    # which it reaches only once announced.
    sender = world.sender
    wanted = set(world.sim_scid)

    def announced() -> bool:
        graph = sender.call(sender.ln.DescribeGraph, sender.s.ln.ChannelGraphRequest())
        return wanted <= {e.channel_id for e in graph.edges}

    world.net.wait_for(world.nodes[world.start.source], announced, timeout_s=300)
    # Peers drop an update no newer (by the second) than the one they hold.
    time.sleep(1.1)
    bounds = {(key, ch.channel_point): (ch.local_constraints.min_htlc_msat,
                                        ch.local_constraints.max_pending_amt_msat)
              for key, client in world.clients.items()
              for ch in client.call(client.ln.ListChannels,
                                    client.s.ln.ListChannelsRequest()).channels}
    targets = {}
    for c in world.start.channels:
        for d in (0, 1):
            if (policy := c.policies[d]) is not None:
                targets[(c.scid, d)] = _apply_policy(
                    world, c, d, policy, bounds[(c.nodes[d], world.chan_point[c.scid])])
    tell("realnet: waiting for the sender's graph to hold every policy")
    for attempt in range(POLICY_ROUNDS):
        missing = _missing_policies(world, targets, wait_s=POLICY_WAIT_S)
        if not missing:
            return
        # An update peers dropped is sent again. lnd sends nothing for a
        # policy it already has, so each goes through a nudged fee first,
        # a second apart (peers drop an update no newer than theirs).
        for nudge in (1, 0):
            time.sleep(1.1)
            for scid, d in missing:
                c = _channel(world, scid)
                policy = c.policies[d]
                assert policy is not None
                _apply_policy(world, c, d, policy.model_copy(
                    update={"fee_base_msat": policy.fee_base_msat + nudge}),
                    bounds[(c.nodes[d], world.chan_point[scid])], note=False)
        tell(f"realnet: {len(missing)} policies sent again (round {attempt + 1})")
    raise RealnetError(f"the sender's graph lacks {len(missing)} policies after "
                       f"{POLICY_ROUNDS} rounds: "
                       + "; ".join(f"{k[0]} end {k[1]}" for k in missing[:6]))


#: Rounds of waiting for the policies, and the wait of each.
POLICY_ROUNDS: Final = 4
POLICY_WAIT_S: Final = 30.0

_Seen = tuple[int, int, int]


def _apply_policy(world: RealWorld, c: ChannelStart, d: int, policy: Policy,
                  bounds: tuple[int, int], note: bool = True) -> _Seen:
    """End d of c applies policy; returns (base fee, rate, cltv delta) as the
    sender's graph will show it. Changes lnd makes are noted once."""
    client = world.clients[c.nodes[d]]
    s = client.s
    txid, index = world.chan_point[c.scid].split(":")
    point = s.ln.ChannelPoint(funding_txid_str=txid, output_index=int(index))
    # lnd keeps a policy within the channel's negotiated bounds
    # (routing/localchans: the min_htlc and max in flight it set), and
    # its cltv delta at lncfg.MinTimeLockDelta or more.
    lo, hi = bounds
    max_htlc, min_htlc = min(policy.htlc_max_msat, hi), max(policy.htlc_min_msat, lo)
    cltv = max(policy.cltv_delta, LND_MIN_CLTV_DELTA)
    if note and cltv != policy.cltv_delta:
        world.changes.append(f"{c.scid} end {d}: cltv delta {cltv}, not "
                             f"{policy.cltv_delta}: lnd's least")
    if note and (min_htlc, max_htlc) != (policy.htlc_min_msat, policy.htlc_max_msat):
        world.changes.append(
            f"{c.scid} end {d}: htlc range [{min_htlc}, {max_htlc}] msat, not "
            f"[{policy.htlc_min_msat}, {policy.htlc_max_msat}]: lnd keeps a policy "
            f"within the channel's bounds [{lo}, {hi}]")
    req = s.ln.PolicyUpdateRequest(
        chan_point=point, base_fee_msat=policy.fee_base_msat, fee_rate_ppm=policy.fee_rate_ppm,
        time_lock_delta=cltv, max_htlc_msat=max_htlc, min_htlc_msat=min_htlc,
        min_htlc_msat_specified=True,
        inbound_fee=s.ln.InboundFee(base_fee_msat=policy.inbound_fee_base_msat,
                                    fee_rate_ppm=policy.inbound_fee_rate_ppm))
    answer = client.call(client.ln.UpdateChannelPolicy, req)
    if answer.failed_updates:
        failed = answer.failed_updates[0]
        raise RealnetError(f"{client.name}: lnd refused the policy of {c.scid} ({policy}): "
                           f"{s.ln.UpdateFailure.Name(failed.reason)}: {failed.update_error}")
    if policy.disabled:
        client.call(client.router.UpdateChanStatus, s.router.UpdateChanStatusRequest(
            chan_point=point, action=s.router.ChanStatusAction.Value("DISABLE")))
    return (policy.fee_base_msat, policy.fee_rate_ppm, cltv)


def _missing_policies(world: RealWorld, targets: dict[tuple[str, int], _Seen],
                      wait_s: float) -> list[tuple[str, int]]:
    """The policies the sender's graph does not show as set, after waiting
    up to wait_s for them."""
    sender = world.sender
    seen: dict[tuple[str, int], _Seen] = {}

    def complete() -> bool:
        seen.clear()
        graph = sender.call(sender.ln.DescribeGraph, sender.s.ln.ChannelGraphRequest())
        for e in graph.edges:
            if (scid := world.sim_scid.get(e.channel_id)) is None:
                continue
            ends = _channel(world, scid).nodes
            for key, side in ((e.node1_pub, "node1_policy"), (e.node2_pub, "node2_policy")):
                if e.HasField(side):
                    pol = getattr(e, side)
                    end = ends.index(world.sim_key[key])
                    seen[(scid, end)] = (pol.fee_base_msat, pol.fee_rate_milli_msat,
                                         pol.time_lock_delta)
        return all(seen.get(k) == v for k, v in targets.items())

    try:
        world.net.wait_for(world.nodes[world.start.source], complete, timeout_s=wait_s)
    except RealnetError:
        return sorted(k for k, v in targets.items() if seen.get(k) != v)
    return []


def _channel(world: RealWorld, scid: str) -> ChannelStart:
    return next(c for c in world.start.channels if c.scid == scid)
