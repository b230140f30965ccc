"""A scenario's payments played on real nodes, by a candidate router or by lnd.

A candidate is served by its own binary (`routesim --serve`, run in the
sandbox; the protocol is docs/realnet.md's). This driver, which is trusted,
plays lnd's payment lifecycle around it, as go/sim/payment.go plays it in the
simulator: it asks for routes until the whole rest is in flight, the part cap
(held parts included) or the attempt limit is reached, checks each route
against its own copy of the payment, and sends each with the real
`SendToRouteV2` from the sender to a real invoice of the receiver (the
invoice's payment address and the total in the last hop's MPP record, each
shard in flight at once). A round ends when every shard has failed, settled
or is held by the receiver (its invoice shows it accepted); each result goes
back to the router as lnd reported it. Only the sender's gRPC API is needed
to route: the receiver's is used to make the invoice, to see held shards and
to cancel a payment given up (on a node not ours, the receiver's MPP timeout
does that).

lnd itself pays with `SendPaymentV2`, its own pathfinding and mission control
in the real process, set with `SetMissionControlConfig` and reset at the
scenario's start.

Real MPP is always atomic: whatever the scenario's arena, the receiver holds
every part until the total has arrived.
"""

from __future__ import annotations

import concurrent.futures as futures
import time
from collections.abc import Callable
from typing import Any, Final

from google.protobuf.json_format import MessageToDict
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from routesim_evolve.corpus.importers import import_lncli
from routesim_evolve.corpus.schema import format_scid, parse_scid
from routesim_evolve.realnet.network import RealnetError
from routesim_evolve.realnet.observe import Observed, observe
from routesim_evolve.realnet.rpc import LndClient
from routesim_evolve.realnet.world import RealWorld

#: How long a shard may stay unresolved and unseen by the receiver before the
#: round stops waiting for it (it is then taken as held, as lnd's own
#: lifecycle takes an attempt with no result).
SHARD_WAIT_S: Final = 30.0

#: The invoice's expiry: long enough for any payment of a scenario.
INVOICE_EXPIRY_S: Final = 3600

#: The wait for one answer of the served router.
ROUTER_ANSWER_S: Final = 60.0

#: The gap between two shards of a round going out. Sent at once from a
#: thread pool, shards reached the sender's lnd in any order, so two that
#: met at the same hop of a channel raced as the threads happened to run.
#: Each is now sent from the driver's thread (LndClient.call_soon), in the
#: order the router gave them, the order the simulator takes at a tie; the
#: gap keeps lnd's goroutines from reordering them, and stays far under the
#: time a hop takes (a commitment exchange), so no shard falls a hop behind.
SHARD_GAP_S: Final = 0.002

#: lnd's default bimodal estimator (routing.DefaultBimodalConfig).
BIMODAL_DEFAULTS: Final = {"scale_msat": 300_000_000, "node_weight": 0.2,
                           "decay_time": 7 * 24 * 3600}


def _sim_scid(world: RealWorld, chan_id: int) -> str:
    """The scenario's name of a real channel (its real one if it has none)."""
    return world.sim_scid.get(chan_id, format_scid(chan_id))


class RealAttempt(BaseModel):
    """One real attempt: its route (by the scenario's channel names) and
    what lnd reported."""

    model_config = ConfigDict(frozen=True)

    round: int
    amount_msat: int
    fee_msat: int
    scids: list[str]
    outcome: str  # "settled", "held", or lnrpc's failure code name
    failure_index: int  # the failing node's position (0 the sender); -1 none
    has_update: bool
    seconds: float


class RealPayment(BaseModel):
    model_config = ConfigDict(frozen=True)

    index: int
    success: bool
    attempts: int
    parts: int
    delivered_msat: int
    fee_msat: int
    seconds: float
    failure_reason: str
    attempt_log: list[RealAttempt] = []
    #: For each round the driver sent, the state its routes' nodes showed
    #: just before (observe.py): round r is observations[r].
    observations: list[Observed] = []


def graph_of(client: LndClient) -> dict[str, Any]:
    """A node's graph (DescribeGraph) in the scenario graph format, read by
    the importer of `lncli describegraph` dumps, which this is the live form of."""
    g = client.call(client.ln.DescribeGraph, client.s.ln.ChannelGraphRequest())
    dump = MessageToDict(g, preserving_proto_field_name=True,
                         always_print_fields_with_no_presence=True)
    graph, _ = import_lncli(dump)
    return graph.model_dump(mode="json", exclude_none=True)


#: The most hops a route may have (the simulator's routing.MaxRouteHops).
MAX_ROUTE_HOPS: Final = 20

#: The weight one more HTLC adds to a commitment (lnd's input.HTLCWeight).
HTLC_WEIGHT: Final = 172

#: An anchor commitment's weight without HTLCs (lnd's input.AnchorCommitWeight).
ANCHOR_COMMIT_WEIGHT: Final = 1124


def spendable_msat(client: LndClient) -> dict[str, int]:
    """What the sender can send on each of its active channels now, as lnd's
    availableCommitmentBalance computes it from what ListChannels shows: its
    balance (which lnd shows net of the commitment fee, and computeView adds
    back) less its reserve and, where it funded the channel, the fee buffer
    (lnwallet.CalcFeeBuffer at twice the fee rate, handed the commitment's
    weight with the new HTLC, to which it adds one more)."""
    out = {}
    for ch in client.call(client.ln.ListChannels, client.s.ln.ListChannelsRequest()).channels:
        if not ch.active:
            continue
        balance = ch.local_balance * 1000
        keep = ch.local_chan_reserve_sat * 1000
        if ch.initiator:
            balance += ch.commit_fee * 1000
            # lnd weighs the commitment as input.AnchorCommitWeight, not as
            # ListChannels' commit_weight (the transaction's own, a few WU less).
            weight = ANCHOR_COMMIT_WEIGHT + (len(ch.pending_htlcs) + 2) * HTLC_WEIGHT
            keep += 2 * ch.fee_per_kw * weight // 1000 * 1000
        out[format_scid(ch.chan_id)] = max(balance - keep, 0)
    return out


class ServedHop(BaseModel):
    """One hop of a route a served router proposed (docs/realnet.md)."""

    model_config = ConfigDict(frozen=True, strict=True)

    pub_key: str
    scid: str
    amt_to_forward_msat: int = Field(ge=0)
    outgoing_time_lock: int = Field(ge=0, lt=1 << 32)


class ServedRoute(BaseModel):
    """A route a served router proposed, read as untrusted input: anything
    else is an invalid route, never an error of the driver."""

    model_config = ConfigDict(frozen=True, strict=True)

    total_time_lock: int = Field(ge=0, lt=1 << 32)
    total_amount_msat: int = Field(ge=0)
    source: str
    hops: list[ServedHop] = Field(min_length=1, max_length=MAX_ROUTE_HOPS)
    label: str = ""


class PaymentSpec(BaseModel):
    """A payment as the driver keeps it: its own copy, never the router's."""

    model_config = ConfigDict(frozen=True)

    index: int
    target: str  # the real key
    amount_msat: int
    fee_limit_msat: int
    max_parts: int
    max_attempts: int
    final_cltv_delta: int
    cltv_limit_delta: int


class _Invoice(BaseModel):
    r_hash: bytes
    payment_addr: bytes
    payment_request: str


def _invoice(receiver: LndClient, spec: PaymentSpec) -> _Invoice:
    s = receiver.s
    inv = receiver.call(receiver.ln.AddInvoice, s.ln.Invoice(
        value_msat=spec.amount_msat, expiry=INVOICE_EXPIRY_S,
        cltv_expiry=spec.final_cltv_delta, memo=f"realnet payment {spec.index}"))
    return _Invoice(r_hash=inv.r_hash, payment_addr=inv.payment_addr,
                    payment_request=inv.payment_request)


class _Shard:
    """One attempt in flight: its route, its future and what was booked."""

    def __init__(self, attempt_id: int, route: ServedRoute, amount: int, fee: int,
                 future: futures.Future[Any], started: float) -> None:
        self.attempt_id, self.route, self.amount, self.fee = attempt_id, route, amount, fee
        self.future, self.started = future, started


class CandidatePlayer:
    """Plays payments with a served candidate router on a real world."""

    def __init__(self, world: RealWorld,
                 ask: Callable[[dict[str, Any], float], dict[str, Any]],
                 between_rounds: Callable[[], None] = lambda: None) -> None:
        #: Called after each round's results are in (the background traffic
        #: of the round's time, RealTraffic.after_round).
        self.between_rounds = between_rounds
        self.world, self.ask = world, ask
        self.sender = world.sender
        self.source = world.real_key[world.start.source]

    def play(self, spec: PaymentSpec) -> RealPayment:
        started = time.monotonic()
        receiver = self.world.clients[self.world.sim_key[spec.target]]
        inv = _invoice(receiver, spec)
        graph = graph_of(self.sender)
        info = self.sender.call(self.sender.ln.GetInfo, self.sender.s.ln.GetInfoRequest())
        height = info.block_height
        begin = {"graph": graph, "unix_time": int(time.time()), "block_height": height,
                 "source": self.source, "local_balances_msat": spendable_msat(self.sender),
                 "payment": {"index": spec.index, "target": spec.target,
                             "amount_msat": spec.amount_msat,
                             "fee_limit_msat": spec.fee_limit_msat,
                             "max_parts": spec.max_parts, "max_attempts": spec.max_attempts,
                             "final_cltv_delta": spec.final_cltv_delta,
                             "cltv_limit": height + spec.cltv_limit_delta, "atomic": True,
                             "payment_addr": inv.payment_addr.hex()}}
        answer = self.ask({"begin": begin}, ROUTER_ANSWER_S)
        run = _PaymentRun(self, spec, inv, graph, height)
        if "error" in answer:
            run.reason = "router_gave_up"
        else:
            run.play()
        return run.finish(receiver, time.monotonic() - started)


class _PaymentRun:
    """One payment's rounds (go/sim/payment.go's paymentRun, on real nodes)."""

    def __init__(self, player: CandidatePlayer, spec: PaymentSpec, inv: _Invoice,
                 graph: dict[str, Any], height: int) -> None:
        self.p, self.spec, self.inv, self.height = player, spec, inv, height
        self.edges = {(c["scid"], c["node1"]): c["node2"] for c in graph["channels"]}
        self.edges.update({(c["scid"], c["node2"]): c["node1"] for c in graph["channels"]})
        self.delivered = self.fees = self.attempts = self.round = 0
        self.log: list[RealAttempt] = []
        self.reason = ""
        self.pending_held: list[_Shard] = []
        self.observations: list[Observed] = []

    def play(self) -> None:
        while not self.reason and self.delivered < self.spec.amount_msat:
            shards = self._dispatch()
            if not shards:
                if not self.reason:
                    self.reason = ("parts_exhausted"
                                   if len(self.pending_held) >= self.spec.max_parts
                                   else "attempts_exhausted")
                return
            self._collect(shards)
            self.p.between_rounds()
            self.round += 1

    def _dispatch(self) -> list[_Shard]:
        """A round: routes asked for until the whole rest is planned, the
        part cap or the attempt limit is reached, or the router says no;
        then the state the routes' nodes show is read once, and every shard
        goes out at once. The router learns nothing within a round, so
        asking for all its routes before sending any changes nothing it
        sees; the state read before the round is what the simulator's rules
        replay the round on (agreement.py). The shards go out in the order
        planned, SHARD_GAP_S apart."""
        planned: list[tuple[ServedRoute, int, int]] = []
        in_flight = 0
        while True:
            unsent = self.spec.amount_msat - self.delivered - in_flight
            if (unsent <= 0 or len(self.pending_held) + len(planned) >= self.spec.max_parts
                    or self.attempts >= self.spec.max_attempts):
                break
            answer = self.p.ask({"request": {"amount_msat": unsent, "in_flight": len(planned)}},
                                ROUTER_ANSWER_S)
            if "route" not in answer:
                if not planned:
                    self.reason = "router_gave_up"
                break
            try:
                route = ServedRoute.model_validate(answer["route"])
            except ValidationError:
                self.reason = "invalid_route"
                break
            checked = self._check(route, unsent, sum(fee for _, _, fee in planned))
            if isinstance(checked, str):
                self.reason = "invalid_route"
                break
            amount, fee = checked
            planned.append((route, amount, fee))
            self.attempts += 1
            in_flight += amount
        if not planned:
            return []
        self.observations.append(observe(
            self.p.world, [r.model_dump(exclude={"label"}) for r, _, _ in planned],
            self.spec.final_cltv_delta))
        first = self.attempts - len(planned)
        shards = []
        for k, (route, amount, fee) in enumerate(planned):
            if k:
                time.sleep(SHARD_GAP_S)
            shards.append(self._send(first + k, route, amount, fee))
        return shards

    def _check(self, route: ServedRoute, unsent: int,
               planned_fees: int) -> tuple[int, int] | str:
        """The route's amount and fee, or what is wrong with it (checkRoute)."""
        if route.source != self.p.source:
            return "route does not start at the sender"
        node = self.p.source
        for hop in route.hops:
            if self.edges.get((hop.scid, node)) != hop.pub_key:
                return f"channel {hop.scid} does not connect {node[:8]} to the hop"
            node = hop.pub_key
        if node != self.spec.target:
            return "route does not end at the target"
        amount = route.hops[-1].amt_to_forward_msat
        if not 0 < amount <= unsent or route.total_amount_msat < amount:
            return "bad amount"
        if route.total_time_lock > self.height + self.spec.cltv_limit_delta:
            return "time lock above the limit"
        fee = route.total_amount_msat - amount
        if self.fees + planned_fees + fee > self.spec.fee_limit_msat:
            return "fee above the budget"
        return amount, fee

    def _send(self, attempt_id: int, route: ServedRoute, amount: int, fee: int) -> _Shard:
        sender = self.p.sender
        s = sender.s
        hops = [s.ln.Hop(chan_id=parse_scid(hop.scid), pub_key=hop.pub_key,
                         amt_to_forward_msat=hop.amt_to_forward_msat,
                         expiry=hop.outgoing_time_lock) for hop in route.hops]
        hops[-1].mpp_record.CopyFrom(s.ln.MPPRecord(payment_addr=self.inv.payment_addr,
                                                    total_amt_msat=self.spec.amount_msat))
        rt = s.ln.Route(total_time_lock=route.total_time_lock,
                        total_amt_msat=route.total_amount_msat, hops=hops)
        request = s.router.SendToRouteRequest(payment_hash=self.inv.r_hash, route=rt,
                                              skip_temp_err=True)
        future = sender.call_soon(sender.router.SendToRouteV2, request, 600.0)
        return _Shard(attempt_id, route, amount, fee, future, time.monotonic())

    def _collect(self, shards: list[_Shard]) -> None:
        """Wait until each shard has a result or is held by the receiver,
        then report each to the router in dispatch order."""
        receiver = self.p.world.clients[self.p.world.sim_key[self.spec.target]]
        deadline = time.monotonic() + SHARD_WAIT_S
        while time.monotonic() < deadline:
            unresolved = [sh for sh in shards if not sh.future.done()]
            if len(unresolved) <= _accepted_htlcs(receiver, self.inv) - len(self.pending_held):
                break
            time.sleep(0.05)
        for sh in shards:
            self._book(sh)

    def _book(self, sh: _Shard) -> None:
        outcome, index, failure = "held", -1, None
        if sh.future.done():
            attempt = sh.future.result()
            s = self.p.sender.s
            if attempt.status == s.ln.HTLCAttempt.HTLCStatus.Value("SUCCEEDED"):
                outcome = "settled"
            elif attempt.status == s.ln.HTLCAttempt.HTLCStatus.Value("FAILED"):
                failure = attempt.failure
                outcome = s.ln.Failure.FailureCode.Name(failure.code)
                index = failure.failure_source_index
        report: dict[str, Any] = {"attempt_id": sh.attempt_id,
                                  "route": sh.route.model_dump(exclude={"label"})}
        if failure is None:
            self.delivered += sh.amount
            self.fees += sh.fee
            self.pending_held.append(sh)
        else:
            report["failure"] = _failure_json(failure, outcome)
            if outcome == "INCORRECT_OR_UNKNOWN_PAYMENT_DETAILS" and index == len(sh.route.hops):
                self.reason = "incorrect_payment_details"
        self.log.append(RealAttempt(
            round=self.round, amount_msat=sh.amount, fee_msat=sh.fee,
            scids=[_sim_scid(self.p.world, parse_scid(h.scid)) for h in sh.route.hops],
            outcome=outcome, failure_index=index,
            has_update=failure is not None and failure.HasField("channel_update"),
            seconds=time.monotonic() - sh.started))
        answer = self.p.ask({"report": report}, ROUTER_ANSWER_S)
        if "error" in answer and not self.reason:
            self.reason = "router_gave_up"

    def finish(self, receiver: LndClient, seconds: float) -> RealPayment:
        success = self.delivered >= self.spec.amount_msat and not self.reason
        if not success and self.pending_held:
            # Fail the held shards back now, not after the MPP timeout.
            receiver.call(receiver.invoices.CancelInvoice,
                          receiver.s.invoices.CancelInvoiceMsg(payment_hash=self.inv.r_hash))
        for sh in self.pending_held:
            with_result = sh.future.result(timeout=180)
            if success and with_result.status != with_result.SUCCEEDED:
                success = False
                self.reason = "held_part_failed"
        self.p.ask({"end": {"success": success,
                            "delivered_msat": self.delivered if success else 0,
                            "fees_msat": self.fees if success else 0,
                            "released": not success and bool(self.pending_held)}},
                   ROUTER_ANSWER_S)
        return RealPayment(index=self.spec.index, success=success, attempts=self.attempts,
                           parts=len(self.pending_held) if success else 0,
                           delivered_msat=self.delivered if success else 0,
                           fee_msat=self.fees if success else 0, seconds=seconds,
                           failure_reason="" if success else (self.reason or "failed"),
                           attempt_log=self.log, observations=self.observations)


def _accepted_htlcs(receiver: LndClient, inv: _Invoice) -> int:
    """How many shards the receiver holds for the invoice (or has settled)."""
    got = receiver.call(receiver.ln.LookupInvoice, receiver.s.ln.PaymentHash(r_hash=inv.r_hash))
    states = receiver.s.ln.InvoiceHTLCState
    return sum(1 for h in got.htlcs if h.state in (states.Value("ACCEPTED"),
                                                     states.Value("SETTLED")))


def _failure_json(f: Any, code: str) -> dict[str, Any]:
    """A real failure (lnrpc.Failure) in the protocol's form."""
    out: dict[str, Any] = {"code": code, "source_index": f.failure_source_index,
                           "htlc_msat": f.htlc_msat, "cltv_expiry": f.cltv_expiry,
                           "flags": f.flags, "height": f.height}
    if f.HasField("channel_update"):
        update = f.channel_update
        out["channel_update"] = {
            "chain_hash": update.chain_hash[::-1].hex() if update.chain_hash else "",
            "scid": format_scid(update.chan_id), "timestamp": update.timestamp,
            "message_flags": update.message_flags, "channel_flags": update.channel_flags,
            "time_lock_delta": update.time_lock_delta,
            "htlc_minimum_msat": update.htlc_minimum_msat, "base_fee": update.base_fee,
            "fee_rate": update.fee_rate, "htlc_maximum_msat": update.htlc_maximum_msat}
    return out


def set_mission_control(sender: LndClient, estimator: str) -> None:
    """Reset the sender's mission control and set its estimator ("apriori"
    with lnd's defaults, or "bimodal" with routing.DefaultBimodalConfig)."""
    s = sender.s
    sender.call(sender.router.ResetMissionControl, s.router.ResetMissionControlRequest())
    cfg = sender.call(sender.router.GetMissionControlConfig,
                      s.router.GetMissionControlConfigRequest()).config
    if estimator == "apriori":
        cfg.model = s.router.MissionControlConfig.ProbabilityModel.Value("APRIORI")
    elif estimator == "bimodal":
        cfg.model = s.router.MissionControlConfig.ProbabilityModel.Value("BIMODAL")
        cfg.bimodal.CopyFrom(s.router.BimodalParameters(**BIMODAL_DEFAULTS))
    else:
        raise ValueError(f"unknown estimator {estimator!r}: apriori or bimodal")
    sender.call(sender.router.SetMissionControlConfig,
                s.router.SetMissionControlConfigRequest(config=cfg))


def play_lnd(world: RealWorld, spec: PaymentSpec) -> RealPayment:
    """One payment by lnd's own SendPaymentV2 on the sender, held to the
    payment's attempt limit as every router is: lnd has none, so when it
    launches one attempt more, the receiver's invoice is cancelled, and that
    attempt and any later one fail at the receiver, which ends lnd's payment.
    When lnd gives up with parts held, the invoice is cancelled too."""
    started = time.monotonic()
    sender = world.sender
    s = sender.s
    receiver = world.clients[world.sim_key[spec.target]]
    inv = _invoice(receiver, spec)
    request = s.router.SendPaymentRequest(
        payment_request=inv.payment_request, fee_limit_msat=spec.fee_limit_msat,
        max_parts=spec.max_parts, timeout_seconds=120, no_inflight_updates=False,
        cltv_limit=spec.cltv_limit_delta)  # lnd's is relative to the height
    final = None
    capped = released = False
    for update in sender.stream(sender.router.SendPaymentV2, request, timeout=300.0):
        final = update
        gave_up = update.failure_reason != s.ln.PaymentFailureReason.Value("FAILURE_REASON_NONE")
        over = len(update.htlcs) > spec.max_attempts
        if not released and (over or gave_up):
            # Over the limit, or lnd gave up while parts are still held:
            # the receiver fails them back now, not after its MPP timeout,
            # as the served routers' driver does.
            receiver.call(receiver.invoices.CancelInvoice,
                          receiver.s.invoices.CancelInvoiceMsg(payment_hash=inv.r_hash))
            capped, released = over, True
    if final is None:
        raise RealnetError(f"{sender.name}: SendPaymentV2 ended without a payment state")
    succeeded = final.status == s.ln.Payment.PaymentStatus.Value("SUCCEEDED")
    log = []
    for h in final.htlcs:
        outcome = {h.SUCCEEDED: "settled", h.IN_FLIGHT: "held"}.get(
            h.status, s.ln.Failure.FailureCode.Name(h.failure.code))
        log.append(RealAttempt(
            round=0, amount_msat=h.route.hops[-1].amt_to_forward_msat if h.route.hops else 0,
            fee_msat=h.route.total_fees_msat,
            scids=[_sim_scid(world, x.chan_id) for x in h.route.hops],
            outcome=outcome, failure_index=h.failure.failure_source_index
            if h.status == h.FAILED else -1,
            has_update=h.failure.HasField("channel_update"),
            seconds=(h.resolve_time_ns - h.attempt_time_ns) / 1e9))
    settled = [h for h in final.htlcs if h.status == h.SUCCEEDED]
    reason = "" if succeeded else ("attempts_exhausted" if capped else
                                   s.ln.PaymentFailureReason.Name(final.failure_reason))
    return RealPayment(
        index=spec.index, success=succeeded, attempts=len(final.htlcs), parts=len(settled),
        delivered_msat=final.value_msat if succeeded else 0,
        fee_msat=final.fee_msat if succeeded else 0, seconds=time.monotonic() - started,
        failure_reason=reason, attempt_log=log)
