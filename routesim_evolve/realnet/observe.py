"""The channel state a round's routes meet, read just before its shards go
out: what the agreement table replays the simulator's forwarding rules on
(agreement.py).

Each node that forwards on a route (the sender and every hop but the last)
is asked for its channels (`ListChannels`) and for its own policy on each
channel that matters (`GetChanInfo`): every channel to its next node (lnd
forwards over any of them) and the one the HTLC comes in over (whose inbound
fee it charges). A channel seen from both ends keeps the state its forwarder
showed; each end's policy is the one that end shows of itself. The format is
go/realnet's `Observed` (docs/realnet.md, "The agreement table").
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from routesim_evolve.corpus.schema import format_scid, parse_scid
from routesim_evolve.realnet.rpc import LndClient
from routesim_evolve.realnet.world import Policy, RealWorld


class ObservedChannel(BaseModel):
    """One channel as a node on the route showed it; index d of each pair is
    the end nodes[d] (nodes[0] the node that showed it)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scid: str
    nodes: tuple[str, str]
    capacity_sat: int
    balance_sat: tuple[int, int]
    reserve_sat: tuple[int, int]
    funder: int
    commit_fee_sat: int
    fee_per_kw: int
    dust_limit_sat: int
    in_flight: tuple[int, int]
    in_flight_msat: tuple[int, int]
    max_htlcs: tuple[int, int]
    policies: tuple[Policy | None, Policy | None]


class Observed(BaseModel):
    """One round as sent, with the state it met (go/realnet.Observed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    height: int
    final_cltv_delta: int
    routes: list[dict[str, Any]]
    channels: list[ObservedChannel]
    offline: list[str]


def observe(world: RealWorld, routes: list[dict[str, Any]], final_cltv_delta: int) -> Observed:
    """The state every forwarding node of the round's `routes` (checked
    routes in the protocol's form: real keys, real channel ids) shows now."""
    sender = world.sender
    height = sender.call(sender.ln.GetInfo, sender.s.ln.GetInfoRequest()).block_height
    # Each forwarding node: the nodes it forwards to, the channels HTLCs come in over.
    wanted: dict[str, tuple[set[str], set[int]]] = {}
    for route in routes:
        hops = route["hops"]
        keys = [route["source"], *(h["pub_key"] for h in hops)]
        for i, node in enumerate(keys[:-1]):
            nexts, incoming = wanted.setdefault(node, (set(), set()))
            nexts.add(keys[i + 1])
            if i > 0:
                incoming.add(parse_scid(hops[i - 1]["scid"]))
    seen: dict[int, ObservedChannel] = {}
    forwarder: dict[int, bool] = {}  # whether the end kept in seen forwards over it
    offline: list[str] = []
    for node, (nexts, incoming) in wanted.items():
        client = world.clients[world.sim_key[node]]
        for ch in client.call(client.ln.ListChannels, client.s.ln.ListChannelsRequest()).channels:
            forwards = ch.remote_pubkey in nexts
            if not forwards and ch.chan_id not in incoming:
                continue
            own, theirs = own_policies(client, ch.chan_id, node)
            view = _observed(ch, node, own, theirs)
            if ch.chan_id in seen:  # both ends showed it: each end's own policy,
                first = seen[ch.chan_id]  # the state as a forwarder showed it
                keep = view if forwards and not forwarder[ch.chan_id] else first
                policy = {first.nodes[0]: first.policies[0], node: own}
                view = keep.model_copy(update={"policies": (policy[keep.nodes[0]],
                                                            policy[keep.nodes[1]])})
                forwards = forwards or forwarder[ch.chan_id]
            seen[ch.chan_id], forwarder[ch.chan_id] = view, forwards
            if not ch.active and ch.remote_pubkey not in offline:
                offline.append(ch.remote_pubkey)
    return Observed(height=height, final_cltv_delta=final_cltv_delta, routes=routes,
                    channels=list(seen.values()), offline=offline)


def _observed(ch: Any, node: str, own: Policy | None, theirs: Policy | None) -> ObservedChannel:
    """A ListChannels entry of `node` in the observed form."""
    offered = [h for h in ch.pending_htlcs if not h.incoming]
    received = [h for h in ch.pending_htlcs if h.incoming]
    return ObservedChannel(
        scid=format_scid(ch.chan_id), nodes=(node, ch.remote_pubkey),
        capacity_sat=ch.capacity, balance_sat=(ch.local_balance, ch.remote_balance),
        reserve_sat=(ch.local_chan_reserve_sat, ch.remote_chan_reserve_sat),
        funder=0 if ch.initiator else 1, commit_fee_sat=ch.commit_fee, fee_per_kw=ch.fee_per_kw,
        dust_limit_sat=ch.local_constraints.dust_limit_sat,
        in_flight=(len(offered), len(received)),
        in_flight_msat=(sum(h.amount for h in offered) * 1000,
                        sum(h.amount for h in received) * 1000),
        # What each end may offer: the other end's max_accepted_htlcs.
        max_htlcs=(ch.remote_constraints.max_accepted_htlcs,
                   ch.local_constraints.max_accepted_htlcs),
        policies=(own, theirs))


def own_policies(client: LndClient, chan_id: int,
                 node: str) -> tuple[Policy | None, Policy | None]:
    """`node`'s own policy on the channel and its peer's, as `node` knows them."""
    edge = client.call(client.ln.GetChanInfo, client.s.ln.ChanInfoRequest(chan_id=chan_id))
    ends = [(edge.node1_pub, edge.node1_policy if edge.HasField("node1_policy") else None),
            (edge.node2_pub, edge.node2_policy if edge.HasField("node2_policy") else None)]
    if ends[1][0] == node:
        ends.reverse()
    return _policy(ends[0][1]), _policy(ends[1][1])


def _policy(p: Any) -> Policy | None:
    if p is None:
        return None
    return Policy(fee_base_msat=p.fee_base_msat, fee_rate_ppm=p.fee_rate_milli_msat,
                  cltv_delta=p.time_lock_delta, htlc_min_msat=p.min_htlc,
                  htlc_max_msat=p.max_htlc_msat, disabled=p.disabled,
                  inbound_fee_base_msat=p.inbound_fee_base_msat,
                  inbound_fee_rate_ppm=p.inbound_fee_rate_milli_msat)
