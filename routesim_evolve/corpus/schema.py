"""Pydantic models of the graph file (`routesim-graph/1`) and the scenario file
(`routesim-scenario/1`), as written down in docs/scenario-format.md: the shape
Python code reads and writes.

Whether a file is valid is decided in one place, the Go reader that the
simulator runs on every scenario (go/scenario, through the tool scenariocheck:
routesim_evolve/corpus/check.py). These models hold no format rule of their
own: `load.py` has Go check a file first and parses it here only when Go
accepted it; a model that then refuses the file disagrees with the format,
a bug the parity tests catch. The models are strict (unknown fields are
errors, JSON types are taken as they are), so that they cannot silently
read a file differently from Go; fields Go lets default to a zero value
default the same way here.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from routesim_evolve.corpus.arenas import ARENA_NAMES

FORMAT_GRAPH: Final = "routesim-graph/1"
FORMAT_SCENARIO: Final = "routesim-scenario/1"

# The arena names, from their registry (arenas.py), in its order.
Arena = Literal[ARENA_NAMES]  # type: ignore[valid-type]
ARENAS: Final[tuple[Arena, ...]] = ARENA_NAMES

# The splits of a corpus directory: each is a sub-directory of scenario files.
Split = Literal["train", "val", "test"]
SPLITS: Final[tuple[Split, ...]] = ("train", "val", "test")

# The encodings below write and read files (the importers and the generator
# need them); the Go reader decides whether a file's ids are valid.

# Limits of lnd's short channel id encoding: 3 bytes block, 3 bytes tx, 2 bytes output.
_SCID_LIMITS: Final = (1 << 24, 1 << 24, 1 << 16)
_SCID = re.compile(r"([0-9]+)x([0-9]+)x([0-9]+)")
_HEX_NODE_ID = re.compile(r"[0-9a-fA-F]{66}")


def parse_scid(text: str) -> int:
    """Parse `BLOCKxTXxOUTPUT` into lnd's integer encoding; ValueError if malformed."""
    match = _SCID.fullmatch(text)
    if match is None:
        raise ValueError(f"want BLOCKxTXxOUTPUT, got {text!r}")
    block, tx, output = (int(part) for part in match.groups())
    if block >= _SCID_LIMITS[0] or tx >= _SCID_LIMITS[1] or output >= _SCID_LIMITS[2]:
        raise ValueError(f"want BLOCKxTXxOUTPUT, got {text!r}")
    return block << 40 | tx << 16 | output


def format_scid(value: int) -> str:
    """Write lnd's integer short channel id as `BLOCKxTXxOUTPUT`."""
    return f"{value >> 40}x{(value >> 16) & 0xFFFFFF}x{value & 0xFFFF}"


def is_node_id(text: str) -> bool:
    """A node id is a 33-byte public key written as 66 hex characters."""
    return _HEX_NODE_ID.fullmatch(text) is not None


class _Strict(BaseModel):
    """Unknown fields are errors and JSON types are taken as they are, as in Go's
    reader, so that a model never reads a file Go refuses in its own way."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ---------------------------------------------------------------------------
# Graph file


class Policy(_Strict):
    """One announced direction of a channel (BOLT 7 channel_update)."""

    fee_base_msat: int = 0
    fee_rate_ppm: int = 0
    cltv_delta: int = 0
    htlc_min_msat: int = 0
    htlc_max_msat: int | None = Field(
        default=None, description="largest HTLC forwarded; absent means the capacity"
    )
    disabled: bool = False
    inbound_fee_base_msat: int = Field(
        default=0, ge=-(1 << 31), lt=1 << 31,
        description="the announcing node's inbound fee on this channel (lnd 0.18+): what it "
        "adds to its fee for an HTLC arriving over it, almost always a discount (negative)")
    inbound_fee_rate_ppm: int = Field(default=0, ge=-(1 << 31), lt=1 << 31)


class Node(_Strict):
    id: str = Field(description="33-byte public key, 66 hex characters")
    alias: str = ""
    features: list[int] = Field(
        default_factory=list,
        description="feature bits; empty means TLV onion (8), payment address (14), MPP (17)",
    )


class Channel(_Strict):
    scid: str = Field(description="short channel id BLOCKxTXxOUTPUT")
    node1: str
    node2: str
    capacity_sat: int
    policy1: Policy | None = Field(default=None, description="node1's policy toward node2")
    policy2: Policy | None = Field(default=None, description="node2's policy toward node1")

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
    nodes: list[Node] = Field(default_factory=list)
    channels: list[Channel] = Field(default_factory=list)


# ---------------------------------------------------------------------------
# Scenario file


class Liquidity(_Strict):
    bimodal_scale_sat: float = Field(
        default=0.0, description="s of lnd's bimodal model P(x) ∝ e^(−x/s) + e^((x−c)/s); > 0"
    )
    uniform_share: float = Field(
        default=0.0, description="share of channels whose balance is uniform on [0, c]"
    )


class Gossip(_Strict):
    stale_share: float = Field(default=0.0, description="share of out-of-date announced directions")
    stale_fee_rate_factor: float = 0.0
    stale_base_fee_add_msat: int = 0
    stale_cltv_add: int = 0


class Clock(_Strict):
    payment_interval_s: float = 0.0
    attempt_latency_s: float = 0.0


class Traffic(_Strict):
    events_per_hour: float = Field(
        default=0.0, description="rate of background liquidity shifts (Poisson)"
    )
    median_shift_sat: float = Field(default=0.0, description="median shift size (log-normal)")


class Attribution(_Strict):
    stripped_rate: float = 0.0
    shift_before_rate: float = 0.0
    shift_after_rate: float = 0.0

    @property
    def total(self) -> float:
        return self.stripped_rate + self.shift_before_rate + self.shift_after_rate

    @property
    def enabled(self) -> bool:
        return self.total > 0


class HtlcSlots(_Strict):
    """How many HTLCs a node accepts in flight on one channel, and how many
    others' payments keep busy (go/scenario's HTLCSlots). Limits of 0: off."""

    large_limit: int = Field(default=0, ge=0, le=483, description="most nodes' max_accepted_htlcs")
    small_limit: int = Field(default=0, ge=0, le=483,
                             description="the limit of a small_share of the nodes")
    small_share: float = Field(default=0.0, ge=0, le=1)
    busy_share: float = Field(
        default=0.0, ge=0, le=1,
        description="share of channel directions that others' payments keep busy")
    busy_htlcs_min: int = Field(default=0, ge=0, le=65535,
                                description="others' HTLCs in flight on a busy direction, "
                                "drawn uniformly from busy_htlcs_min to busy_htlcs_max")
    busy_htlcs_max: int = Field(default=0, ge=0, le=65535)


class Peers(_Strict):
    """Nodes that come and go over virtual time (go/scenario's Peers): a
    flaky_share of the nodes (never the sender), online and offline spans drawn
    from exponentials with these means. flaky_share 0: off."""

    flaky_share: float = Field(default=0.0, ge=0, le=1)
    online_mean_s: float = Field(default=0.0, ge=0)
    offline_mean_s: float = Field(default=0.0, ge=0)


class Rules(_Strict):
    """The checks real nodes make beyond the announced policy (go/scenario's
    Rules; docs/scenario-format.md, "The rules real nodes enforce"). Each is
    off at its zero value; a scenario without the block plays none."""

    reserve_share: float = Field(default=0.0, ge=0, le=1,
                                 description="each side's channel reserve, a share of capacity")
    dust_limit_sat: int = Field(default=0, ge=0, description="the reserve's floor")
    commit_feerate_sat_per_kw: int = Field(
        default=0, ge=0, description="the commitment's fee rate: the funder keeps lnd's fee "
        "buffer at it")
    anchors_sat: int = Field(default=0, ge=0, description="the funder's two anchor outputs")
    htlc_slots: HtlcSlots = Field(default_factory=HtlcSlots)
    peers: Peers = Field(default_factory=Peers)


class PaymentDefaults(_Strict):
    max_parts: int = 0
    max_attempts: int = 0
    fee_limit_ppm: float = 0.0
    fee_limit_base_msat: int = 0
    final_cltv_delta: int = 0
    cltv_limit_delta: int = 0


class Payment(_Strict):
    target: str = ""
    amount_msat: int = 0
    max_parts: int = Field(default=0, description="0: the defaults' max_parts")
    max_attempts: int = Field(default=0, description="0: the defaults' max_attempts")
    fee_limit_msat: int | None = Field(default=None, description="absent: from the defaults")
    amount_share: float | None = Field(
        default=None, gt=0,
        description="the amount's share of the max flow to the target at the scenario's start "
                    "(the generator's difficulty); a world drawn under a secret sizes the "
                    "payment again by it (corpus/worlds.py). Absent: the amount stands")

    def fee_limit(self, defaults: PaymentDefaults) -> int:
        """The fee limit in msat, computed as the Go side does (one formula:
        tests/test_limits_parity.py checks it on Go's own values)."""
        if self.fee_limit_msat is not None:
            return self.fee_limit_msat
        return defaults.fee_limit_base_msat + int(self.amount_msat * defaults.fee_limit_ppm / 1e6)

    def parts(self, defaults: PaymentDefaults) -> int:
        return self.max_parts if self.max_parts > 0 else defaults.max_parts

    def attempts(self, defaults: PaymentDefaults) -> int:
        return self.max_attempts if self.max_attempts > 0 else defaults.max_attempts


class Scenario(_Strict):
    """A scenario file."""

    format: str
    name: str = ""
    arena: str = ""
    seed: int = 0
    graph: str = Field(default="", description="graph file path, relative to the scenario file")
    source: str = ""
    block_height: int = 0
    # Lax inside: strict mode refuses a JSON string for a datetime.
    start_time: datetime = Field(strict=False)
    liquidity: Liquidity = Field(default_factory=Liquidity)
    local_balances_msat: dict[str, int] = Field(default_factory=dict)
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
    rules: Rules | None = Field(
        default=None, description="absent: no rule is played (the simulator before them)")
    defaults: PaymentDefaults = Field(default_factory=PaymentDefaults)
    payments: list[Payment] = Field(default_factory=list)
