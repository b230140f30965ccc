"""Pydantic models of the graph file (`routesim-graph/1`) and the scenario file
(`routesim-scenario/1`), as written down in docs/scenario-format.md.

The Go reader (go/scenario) is the other implementation of the same format; the
rules and their messages here mirror it so that a file is accepted or refused
the same way on both sides. Fields the Go decoder lets default to a zero value
that is valid (e.g. `gossip`, `traffic`, `seed`) default the same way here;
fields whose zero value Go refuses (e.g. `name`, `start_time`) are required.

Validate files from their JSON bytes (`Graph.model_validate_json`,
`Scenario.model_validate_json`): the models are strict, as Go's decoder is, so
`"5"` or `1.5` is no integer. Checks of a scenario against its graph (the
source, local balances, payment targets) run when the graph is passed in the
validation context: `Scenario.model_validate_json(data, context=graph_context(g, path))`.

Rule violations are `PydanticCustomError`s of type `corpus_rule`; a rule found
by a model-level check carries the offending sub-field in `ctx["field"]`, so
`load.py` can name the full field path (`payments[3].target`) as Go does.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    model_validator,
)
from pydantic_core import PydanticCustomError

FORMAT_GRAPH: Final = "routesim-graph/1"
FORMAT_SCENARIO: Final = "routesim-scenario/1"

Arena = Literal["base", "drift", "atomic_mpp", "attribution"]
ARENAS: Final[tuple[Arena, ...]] = ("base", "drift", "atomic_mpp", "attribution")

# The splits of a corpus directory: each is a sub-directory of scenario files.
Split = Literal["train", "val", "test"]
SPLITS: Final[tuple[Split, ...]] = ("train", "val", "test")

RULE_ERROR_TYPE: Final = "corpus_rule"

# Limits of lnd's short channel id encoding: 3 bytes block, 3 bytes tx, 2 bytes output.
_SCID_LIMITS: Final = (1 << 24, 1 << 24, 1 << 16)
_SCID = re.compile(r"([0-9]+)x([0-9]+)x([0-9]+)")
_HEX_NODE_ID = re.compile(r"[0-9a-fA-F]{66}")
_RFC3339 = re.compile(
    r"\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})"
)


def rule_error(message: str, field: str = "") -> PydanticCustomError:
    """A violated format rule; `field` is the sub-field (relative to the model the
    check runs on) when the check sees more than one field."""
    ctx: dict[str, Any] = {"detail": message}
    if field:
        ctx["field"] = field
    return PydanticCustomError(RULE_ERROR_TYPE, "{detail}", ctx)


def quote(text: str) -> str:
    """Quote a string as Go's %q does (for the ASCII the format uses)."""
    return json.dumps(text, ensure_ascii=False)


def show_number(value: float) -> str:
    """Print a number as Go's %v does: integral floats without a decimal point."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    return repr(value)


# ---------------------------------------------------------------------------
# Field types: each carries the Go reader's rule and message.


def parse_scid(text: str) -> int:
    """Parse `BLOCKxTXxOUTPUT` into lnd's integer encoding; ValueError if malformed."""
    match = _SCID.fullmatch(text)
    if match is None:
        raise ValueError(f"want BLOCKxTXxOUTPUT, got {quote(text)}")
    block, tx, output = (int(part) for part in match.groups())
    if block >= _SCID_LIMITS[0] or tx >= _SCID_LIMITS[1] or output >= _SCID_LIMITS[2]:
        raise ValueError(f"want BLOCKxTXxOUTPUT, got {quote(text)}")
    return block << 40 | tx << 16 | output


def format_scid(value: int) -> str:
    """Write lnd's integer short channel id as `BLOCKxTXxOUTPUT`."""
    return f"{value >> 40}x{(value >> 16) & 0xFFFFFF}x{value & 0xFFFF}"


def is_node_id(text: str) -> bool:
    """A node id is a 33-byte public key written as 66 hex characters."""
    return _HEX_NODE_ID.fullmatch(text) is not None


def _check_node_id(text: str) -> str:
    if not is_node_id(text):
        raise rule_error(f"want 66 hex characters (33-byte public key), got {quote(text)}")
    return text


def _check_scid(text: str) -> str:
    try:
        parse_scid(text)
    except ValueError as exc:
        raise rule_error(str(exc)) from None
    return text


def _unsigned(bits: int) -> AfterValidator:
    """Go decodes these fields into uintN: negative or too large values do not fit."""
    limit = 1 << bits

    def check(value: int) -> int:
        if not 0 <= value < limit:
            raise rule_error(f"want uint{bits}, got JSON number {value}")
        return value

    return AfterValidator(check)


def _check_rate(value: float) -> float:
    if not 0 <= value <= 1:
        raise rule_error(f"must lie in [0, 1], got {show_number(value)}")
    return value


def _check_non_negative(value: float) -> float:
    if value < 0:
        raise rule_error(f"must not be negative, got {show_number(value)}")
    return value


def _check_rfc3339(value: object) -> object:
    # Go's time.Time takes an RFC 3339 string only; pydantic alone would also take
    # "2026-01-01 00:00:00" or a Unix number.
    if isinstance(value, datetime):
        return value
    if not isinstance(value, str) or not _RFC3339.fullmatch(value):
        shown = quote(value) if isinstance(value, str) else repr(value)
        raise rule_error(f"want an RFC 3339 time, got {shown}")
    return value


NodeId = Annotated[str, AfterValidator(_check_node_id)]
Scid = Annotated[str, AfterValidator(_check_scid)]
Uint16 = Annotated[int, _unsigned(16)]
Uint32 = Annotated[int, _unsigned(32)]
Uint64 = Annotated[int, _unsigned(64)]
Int64 = Annotated[int, Field(ge=-(1 << 63), lt=1 << 63)]
Rate = Annotated[float, AfterValidator(_check_rate)]
NonNegative = Annotated[float, AfterValidator(_check_non_negative)]
# Lax inside (the string is checked before), as strict mode refuses any string
# once a before-validator has run.
Rfc3339Time = Annotated[datetime, BeforeValidator(_check_rfc3339), Field(strict=False)]


class _Strict(BaseModel):
    """Unknown fields are errors and JSON types are taken as they are, as Go's
    strict decoder does."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ---------------------------------------------------------------------------
# Graph file


class Policy(_Strict):
    """One announced direction of a channel (BOLT 7 channel_update)."""

    fee_base_msat: Uint32 = 0
    fee_rate_ppm: Uint32 = 0
    cltv_delta: Uint16 = 0
    htlc_min_msat: Uint64 = 0
    htlc_max_msat: Uint64 | None = Field(
        default=None, description="largest HTLC forwarded; absent means the capacity"
    )
    disabled: bool = False


class Node(_Strict):
    id: NodeId
    alias: str = ""
    features: list[int] = Field(
        default_factory=list,
        description="feature bits; empty means TLV onion (8), payment address (14), MPP (17)",
    )


class Channel(_Strict):
    scid: Scid
    node1: str
    node2: str
    capacity_sat: Int64
    policy1: Policy | None = Field(default=None, description="node1's policy toward node2")
    policy2: Policy | None = Field(default=None, description="node2's policy toward node1")

    @model_validator(mode="after")
    def _htlc_max_within_capacity_and_above_min(self) -> Channel:
        if self.capacity_sat <= 0:
            raise rule_error(
                f"capacity must be positive, got {self.capacity_sat}", "capacity_sat"
            )
        capacity_msat = self.capacity_sat * 1000
        for name, policy in (("policy1", self.policy1), ("policy2", self.policy2)):
            if policy is None or policy.htlc_max_msat is None:
                continue
            field = f"{name}.htlc_max_msat"
            if policy.htlc_max_msat > capacity_msat:
                raise rule_error(
                    f"{policy.htlc_max_msat} exceeds the capacity ({capacity_msat} msat)", field
                )
            if policy.htlc_max_msat < policy.htlc_min_msat:
                raise rule_error(
                    f"{policy.htlc_max_msat} is below htlc_min_msat {policy.htlc_min_msat}", field
                )
        return self

    def policy_from(self, node: str) -> Policy | None:
        """The policy `node` announced for forwarding over this channel."""
        if node == self.node1:
            return self.policy1
        if node == self.node2:
            return self.policy2
        raise ValueError(f"node {node} is not an end of channel {self.scid}")

    def peer_of(self, node: str) -> str:
        """The other end of the channel seen from `node`."""
        return self.node2 if node == self.node1 else self.node1


class Graph(_Strict):
    """A graph file: the public channel graph with announced policies."""

    format: str
    nodes: list[Node]
    channels: list[Channel] = Field(default_factory=list)

    @model_validator(mode="after")
    def _consistent(self) -> Graph:
        if self.format != FORMAT_GRAPH:
            raise rule_error(f"want {quote(FORMAT_GRAPH)}, got {quote(self.format)}", "format")
        if not self.nodes:
            raise rule_error("graph has no nodes", "nodes")
        known: set[str] = set()
        for i, node in enumerate(self.nodes):
            if node.id in known:
                raise rule_error(f"duplicate node {node.id}", f"nodes[{i}].id")
            known.add(node.id)
        seen_scids: set[int] = set()
        for i, channel in enumerate(self.channels):
            _check_channel_in_graph(i, channel, known, seen_scids)
        return self


def _check_channel_in_graph(
    index: int, channel: Channel, known: set[str], seen_scids: set[int]
) -> None:
    at = f"channels[{index}]"
    scid = parse_scid(channel.scid)
    if scid in seen_scids:
        raise rule_error(f"duplicate channel {channel.scid}", f"{at}.scid")
    seen_scids.add(scid)
    for field, end in (("node1", channel.node1), ("node2", channel.node2)):
        if end not in known:
            raise rule_error(f"unknown node {quote(end)}", f"{at}.{field}")
    if channel.node1 == channel.node2:
        raise rule_error(f"channel connects {channel.node1} to itself", f"{at}.node2")


# ---------------------------------------------------------------------------
# Scenario file


class Liquidity(_Strict):
    bimodal_scale_sat: float = Field(
        description="s of lnd's bimodal model P(x) ∝ e^(−x/s) + e^((x−c)/s); > 0"
    )
    uniform_share: Rate = Field(
        default=0.0, description="share of channels whose balance is uniform on [0, c]"
    )


class Gossip(_Strict):
    stale_share: Rate = Field(default=0.0, description="share of out-of-date announced directions")
    stale_fee_rate_factor: float = 0.0
    stale_base_fee_add_msat: Uint32 = 0
    stale_cltv_add: Uint16 = 0


class Clock(_Strict):
    payment_interval_s: NonNegative = 0.0
    attempt_latency_s: NonNegative = 0.0


class Traffic(_Strict):
    events_per_hour: NonNegative = Field(
        default=0.0, description="rate of background liquidity shifts (Poisson)"
    )
    median_shift_sat: float = Field(default=0.0, description="median shift size (log-normal)")


class Attribution(_Strict):
    stripped_rate: Rate = 0.0
    shift_before_rate: Rate = 0.0
    shift_after_rate: Rate = 0.0

    @property
    def total(self) -> float:
        return self.stripped_rate + self.shift_before_rate + self.shift_after_rate

    @property
    def enabled(self) -> bool:
        return self.total > 0


class PaymentDefaults(_Strict):
    max_parts: Uint32
    max_attempts: Int64
    fee_limit_ppm: NonNegative = 0.0
    fee_limit_base_msat: Uint64 = 0
    final_cltv_delta: Uint16
    cltv_limit_delta: Uint32

    @model_validator(mode="after")
    def _ranges(self) -> PaymentDefaults:
        for field in ("max_parts", "max_attempts", "final_cltv_delta"):
            if getattr(self, field) < 1:
                raise rule_error("must be at least 1", field)
        if self.cltv_limit_delta <= self.final_cltv_delta:
            raise rule_error(
                f"must exceed final_cltv_delta ({self.final_cltv_delta}), "
                f"got {self.cltv_limit_delta}",
                "cltv_limit_delta",
            )
        return self


class Payment(_Strict):
    target: str
    amount_msat: Uint64
    max_parts: Uint32 = Field(default=0, description="0: the defaults' max_parts")
    max_attempts: Int64 = Field(default=0, description="0: the defaults' max_attempts")
    fee_limit_msat: Uint64 | None = Field(default=None, description="absent: from the defaults")

    def fee_limit(self, defaults: PaymentDefaults) -> int:
        """The fee limit in msat, computed as the Go side does."""
        if self.fee_limit_msat is not None:
            return self.fee_limit_msat
        return defaults.fee_limit_base_msat + int(self.amount_msat * defaults.fee_limit_ppm / 1e6)

    def parts(self, defaults: PaymentDefaults) -> int:
        return self.max_parts if self.max_parts > 0 else defaults.max_parts

    def attempts(self, defaults: PaymentDefaults) -> int:
        return self.max_attempts if self.max_attempts > 0 else defaults.max_attempts


# What each arena's settings must switch on, for the message when they do not.
_ARENA_NEEDS: Final[dict[str, str]] = {
    "drift": "traffic.events_per_hour > 0",
    "atomic_mpp": "atomic_mpp: true",
    "attribution": "a positive attribution rate",
}


class Scenario(_Strict):
    """A scenario file. Pass `graph_context(...)` as validation context to check it
    against its graph as well."""

    format: str
    name: str
    arena: str
    seed: Uint64 = 0
    graph: str = Field(description="graph file path, relative to the scenario file")
    source: NodeId
    block_height: Uint32 = 0
    start_time: Rfc3339Time
    liquidity: Liquidity
    local_balances_msat: dict[str, Uint64] = Field(default_factory=dict)
    sender_policies: dict[str, Policy] = Field(
        default_factory=dict,
        description="the sender's own outgoing policy per channel where the graph has none "
        "or a disabled one",
    )
    gossip: Gossip = Field(default_factory=Gossip)
    clock: Clock = Field(default_factory=Clock)
    traffic: Traffic = Field(default_factory=Traffic)
    atomic_mpp: bool = False
    attribution: Attribution = Field(default_factory=Attribution)
    defaults: PaymentDefaults
    payments: list[Payment]

    @model_validator(mode="after")
    def _consistent(self, info: ValidationInfo) -> Scenario:
        _check_scenario_alone(self)
        context = info.context or {}
        graph = context.get("graph")
        if graph is not None:
            _check_scenario_against_graph(self, graph, context.get("graph_path", self.graph))
        return self

    def arena_enabled(self) -> bool:
        """Whether the settings switch on the behaviour the arena stands for."""
        return {
            "base": True,
            "drift": self.traffic.events_per_hour > 0,
            "atomic_mpp": self.atomic_mpp,
            "attribution": self.attribution.enabled,
        }.get(self.arena, False)


def graph_context(graph: Graph, graph_path: str) -> dict[str, Any]:
    """Validation context that makes `Scenario` check itself against `graph`."""
    return {"graph": graph, "graph_path": graph_path}


def _check_scenario_alone(sc: Scenario) -> None:
    """The rules Go's Scenario.Validate checks before it looks at the graph."""
    if sc.format != FORMAT_SCENARIO:
        raise rule_error(f"want {quote(FORMAT_SCENARIO)}, got {quote(sc.format)}", "format")
    if not sc.graph:
        raise rule_error("missing graph file path", "graph")
    if not sc.name:
        raise rule_error("missing scenario name", "name")
    if sc.arena not in ARENAS:
        raise rule_error(
            f"unknown arena {quote(sc.arena)} (want base, drift, atomic_mpp or attribution)",
            "arena",
        )
    if not sc.arena_enabled():
        raise rule_error(f"arena {quote(sc.arena)} needs {_ARENA_NEEDS[sc.arena]}", "arena")
    if sc.attribution.total > 1:
        raise rule_error(
            f"rates add up to {show_number(sc.attribution.total)}, more than 1", "attribution"
        )
    if sc.liquidity.bimodal_scale_sat <= 0:
        raise rule_error(
            f"must be positive, got {show_number(sc.liquidity.bimodal_scale_sat)}",
            "liquidity.bimodal_scale_sat",
        )
    if sc.gossip.stale_share > 0 and sc.gossip.stale_fee_rate_factor < 1:
        raise rule_error(
            f"must be at least 1, got {show_number(sc.gossip.stale_fee_rate_factor)}",
            "gossip.stale_fee_rate_factor",
        )
    if sc.traffic.events_per_hour > 0 and sc.traffic.median_shift_sat <= 0:
        raise rule_error(
            "must be positive when traffic is on, "
            f"got {show_number(sc.traffic.median_shift_sat)}",
            "traffic.median_shift_sat",
        )
    if not sc.payments:
        raise rule_error("scenario has no payments", "payments")
    for i, payment in enumerate(sc.payments):
        if payment.amount_msat == 0:
            raise rule_error("must be positive", f"payments[{i}].amount_msat")
        if payment.max_attempts < 0:
            raise rule_error("must not be negative", f"payments[{i}].max_attempts")


def _check_sender_policies(sc: Scenario, graph: Graph, own_capacity: dict[str, int]) -> None:
    """Every channel of the sender has an enabled outgoing policy: the
    graph's, or one of sender_policies, which names only its channels."""
    for scid in sorted(sc.sender_policies):
        policy = sc.sender_policies[scid]
        field = f"sender_policies[{quote(scid)}]"
        if scid not in own_capacity:
            raise rule_error("not a channel of the source", field)
        if policy.disabled:
            raise rule_error("the sender's own policy must be enabled", field + ".disabled")
        top = policy.htlc_max_msat
        if top is not None and top > own_capacity[scid] * 1000:
            raise rule_error(f"{top} msat exceeds the capacity {own_capacity[scid]} sat",
                             field + ".htlc_max_msat")
        if top is not None and top < policy.htlc_min_msat:
            raise rule_error(f"{top} is below htlc_min_msat {policy.htlc_min_msat}",
                             field + ".htlc_max_msat")
    for c in graph.channels:
        if sc.source not in (c.node1, c.node2) or c.scid in sc.sender_policies:
            continue
        own = c.policy_from(sc.source)
        if own is None or own.disabled:
            raise rule_error(
                "the sender's channel has no enabled policy in the graph, so the scenario must "
                "give one (the generator writes lnd's defaults)",
                f"sender_policies[{quote(c.scid)}]",
            )


def _check_scenario_against_graph(sc: Scenario, graph: Graph, graph_path: str) -> None:
    """The rules that need the graph: the source, its balances, the targets."""
    own_capacity = {
        c.scid: c.capacity_sat for c in graph.channels if sc.source in (c.node1, c.node2)
    }
    if not own_capacity:
        raise rule_error(f"node {sc.source} has no channel in {graph_path}", "source")
    for scid, balance in sc.local_balances_msat.items():
        field = f"local_balances_msat[{quote(scid)}]"
        if scid not in own_capacity:
            raise rule_error("not a channel of the source", field)
        if balance > own_capacity[scid] * 1000:
            raise rule_error(
                f"{balance} msat exceeds the capacity {own_capacity[scid]} sat", field
            )
    _check_sender_policies(sc, graph, own_capacity)
    known = {n.id for n in graph.nodes}
    for i, payment in enumerate(sc.payments):
        if payment.target not in known:
            raise rule_error(f"unknown node {quote(payment.target)}", f"payments[{i}].target")
        if payment.target == sc.source:
            raise rule_error("payment to the source itself", f"payments[{i}].target")
