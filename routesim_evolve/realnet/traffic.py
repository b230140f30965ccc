"""Background traffic on real nodes: each of the simulator's shifts (others'
payments moving liquidity on a channel the sender is not on) paid for real,
by one end of the channel to the other, over that channel alone.

The events come from the trusted worldstart tool (sim.World.TrafficUntil), so
they are the simulator's own: same channels, same directions, same sizes, in
the same order, on the simulator's clock: a payment starts at its slot or when
the one before ended, whichever is later, and each round of a served router's
payment takes the scenario's attempt latency, so the events of that time are
played between its rounds, as the simulator plays them. lnd's SendPaymentV2
has no rounds the driver sees: after each of its payments, the driver plays the
events of the time the simulator's lnd took on it (its rounds), so that the
next payment starts on the same clock. What moves is what the payer may spend
then (lnd's availableCommitmentBalance, as the simulator's shift takes).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from routesim_evolve.corpus.schema import format_scid
from routesim_evolve.realnet.network import RealnetError
from routesim_evolve.realnet.observe import own_policies
from routesim_evolve.realnet.play import spendable_msat
from routesim_evolve.realnet.rpc import LndClient
from routesim_evolve.realnet.world import RealWorld, Shift

#: The cltv delta of a traffic payment's invoice and its one hop.
SHIFT_CLTV_DELTA = 40


@dataclass
class RealTraffic:
    """The scenario's traffic, played on real nodes payment by payment."""

    world: RealWorld
    events: list[Shift]
    payment_interval_s: float
    attempt_latency_s: float = 0.0
    played: int = 0
    #: The simulator's clock, in seconds after the scenario's start.
    now_s: float = 0.0
    #: What moved of each event played, in msat (0 where nothing could).
    moved: list[int] = field(default_factory=list)

    def before_payment(self, index: int) -> None:
        """Start payment `index`: at its slot, or when the one before ended
        if that is later (go/sim/runner.go), with every event before it played."""
        self.now_s = max(self.now_s, index * self.payment_interval_s)
        self._play_until(self.now_s)

    def after_round(self, rounds: int = 1) -> None:
        """Rounds of the payment took the attempt latency each: play their
        events (go/sim/payment.go advances the clock after each round)."""
        self.now_s += rounds * self.attempt_latency_s
        self._play_until(self.now_s)

    def _play_until(self, at_s: float) -> None:
        while self.played < len(self.events) and self.events[self.played].at_s <= at_s:
            self.moved.append(shift(self.world, self.events[self.played]))
            self.played += 1


def shift(world: RealWorld, ev: Shift) -> int:
    """Pay the event's amount to the other end over the event's channel
    alone, as the simulator's shift does: no more than the payer may spend
    nor than its policy's maximum, nothing under its minimum; returns what
    moved, in msat."""
    payer = world.clients[ev.from_]
    payee = world.clients[ev.to]
    chan_id = world.real_chan[ev.scid]
    amount = min(ev.amount_msat, spendable_msat(payer).get(format_scid(chan_id), 0))
    own, _ = own_policies(payer, chan_id, world.real_key[ev.from_])
    if own is not None:
        if own.htlc_max_msat:
            amount = min(amount, own.htlc_max_msat)
        if amount < own.htlc_min_msat:
            return 0
    if amount <= 0:
        return 0
    return amount if _pay_direct(payer, payee, world.real_key[ev.to], chan_id, amount) else 0


def _pay_direct(payer: LndClient, payee: LndClient, payee_key: str, chan_id: int,
                amount: int) -> bool:
    """One single-hop payment over the channel; whether it settled."""
    s = payer.s
    inv = payee.call(payee.ln.AddInvoice, payee.s.ln.Invoice(
        value_msat=amount, expiry=600, cltv_expiry=SHIFT_CLTV_DELTA, memo="realnet traffic"))
    height = payer.call(payer.ln.GetInfo, s.ln.GetInfoRequest()).block_height
    hop = s.ln.Hop(chan_id=chan_id, pub_key=payee_key, amt_to_forward_msat=amount,
                   expiry=height + SHIFT_CLTV_DELTA)
    hop.mpp_record.CopyFrom(s.ln.MPPRecord(payment_addr=inv.payment_addr, total_amt_msat=amount))
    route = s.ln.Route(total_time_lock=height + SHIFT_CLTV_DELTA, total_amt_msat=amount,
                       hops=[hop])
    done = payer.call(payer.router.SendToRouteV2,
                      s.router.SendToRouteRequest(payment_hash=inv.r_hash, route=route), 120.0)
    settled = bool(done.status == s.ln.HTLCAttempt.HTLCStatus.Value("SUCCEEDED"))
    _wait_off_commitment(payer, chan_id, inv.r_hash)
    return settled


def _wait_off_commitment(client: LndClient, chan_id: int, r_hash: bytes,
                         wait_s: float = 30.0) -> None:
    """Wait until the shift's own HTLC is off the channel's commitment: a
    settled payment moves its amount to the payee only once the commitments
    are signed, and the simulator's shift moves it at once. Only its own: the
    channel may carry a payment's shards held at the receiver meanwhile (the
    driver plays traffic between a payment's rounds), which stay for long."""
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        chans = client.call(client.ln.ListChannels, client.s.ln.ListChannelsRequest()).channels
        if not any(ch.chan_id == chan_id and any(h.hash_lock == r_hash for h in ch.pending_htlcs)
                   for ch in chans):
            return
        time.sleep(0.05)
    raise RealnetError(f"{client.name}: a traffic payment's HTLC stayed on channel "
                       f"{format_scid(chan_id)} for {wait_s:.0f} s after it settled")
