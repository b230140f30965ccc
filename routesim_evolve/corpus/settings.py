"""The generator's settings: everything that decides a generated corpus besides
the code. The manifest stamps them in full, so a corpus can be made again."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Final, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from routesim_evolve.corpus.arenas import arena_spec, switched_on
from routesim_evolve.corpus.schema import ARENAS, SPLITS, Arena, HtlcSlots, Peers, Rules, Split


class _Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Range(_Settings):
    """A range whose ends are in order."""

    min: float
    max: float

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.min > self.max:
            raise ValueError(f"min {self.min} exceeds max {self.max}")
        return self


class IntRange(_Range):
    """Inclusive range of whole numbers, drawn uniformly."""

    min: int = Field(ge=0)
    max: int = Field(ge=0)


class FloatRange(_Range):
    """Closed range of numbers."""

    min: float = Field(ge=0)
    max: float = Field(ge=0)


class AttributionRates(_Settings):
    """Shares of failed attempts whose report is degraded (see scenario-format.md)."""

    stripped_rate: float = Field(
        default=0.0, ge=0, le=1, description="unreadable, blamed on a node off the route"
    )
    shift_before_rate: float = Field(
        default=0.0, ge=0, le=1, description="blame moved one hop toward the sender"
    )
    shift_after_rate: float = Field(
        default=0.0, ge=0, le=1, description="blame moved one hop toward the receiver"
    )

    @model_validator(mode="after")
    def _at_most_one(self) -> Self:
        if self.stripped_rate + self.shift_before_rate + self.shift_after_rate > 1:
            raise ValueError("attribution rates add up to more than 1")
        return self

    @property
    def enabled(self) -> bool:
        return self.stripped_rate + self.shift_before_rate + self.shift_after_rate > 0


#: How long a real receiver holds the shards of a payment that has not arrived
#: whole (lnd's invoices.DefaultHtlcHoldDuration; go/scenario's MPPTimeoutSec).
MPP_TIMEOUT_S: Final = 120


def real_node_rules() -> Rules:
    """The rules real nodes enforce, as the generator writes them unless told
    otherwise: lnd's defaults and the implementations' shares on the public
    network (docs/scenario-format.md, "The rules real nodes enforce", says
    where each number comes from)."""
    return Rules(
        reserve_share=0.01, dust_limit_sat=354, commit_feerate_sat_per_kw=1000, anchors_sat=660,
        htlc_slots=HtlcSlots(large_limit=483, small_limit=30, small_share=0.1,
                             busy_share=0.1, busy_htlcs_min=10, busy_htlcs_max=40),
        peers=Peers(flaky_share=0.1, online_mean_s=7200, offline_mean_s=600),
    )


class ArenaSettings(_Settings):
    """How the scenarios of one arena are made. The arena's own switch (traffic for
    drift, atomic_mpp, attribution) must be on for its arena (checked below)."""

    # Hidden liquidity
    bimodal_scale_sat: float = Field(default=300_000, gt=0, description="lnd's bimodal s")
    uniform_share: float = Field(default=0.2, ge=0, le=1, description="uniform-balance channels")
    local_balance_share: FloatRange | None = Field(
        default_factory=lambda: FloatRange(min=0.5, max=0.9),
        description="sender's balance per own channel as a share of capacity, drawn "
        "uniformly from this range (a payer has mostly outbound liquidity); None leaves "
        "the draw (uniform on [0, c]) to the simulator",
    )
    # Stale gossip
    stale_share: float = Field(default=0.05, ge=0, le=1)
    stale_fee_rate_factor: float = Field(default=2.0, ge=1)
    stale_base_fee_add_msat: int = Field(default=1000, ge=0)
    stale_cltv_add: int = Field(default=40, ge=0)
    # Background traffic (drift)
    events_per_hour: float = Field(default=0.0, ge=0)
    median_shift_sat: float = Field(default=100_000, gt=0)
    # Arena switches
    atomic_mpp: bool = Field(
        default=True,
        description="a receiver holds every shard until the shards add up to the amount, as "
        "real receivers do (BOLT 04); false settles each shard as it arrives, the seed's "
        "behaviour before, kept to reproduce earlier results")
    attribution: AttributionRates = Field(default_factory=AttributionRates)
    # What real nodes refuse beyond their policy
    rules: Rules | None = Field(
        default_factory=real_node_rules,
        description="the rules real nodes enforce (reserves, the funder's fee buffer, HTLC "
        "slots); null writes scenarios without them, as the simulator played before them")
    # Clock
    block_height: int = Field(default=800_000, ge=0)
    start_time: str = Field(default="2026-01-01T00:00:00Z", description="RFC 3339")
    payment_interval_s: float = Field(default=600, ge=0)
    attempt_latency_s: float = Field(default=2, ge=0)
    # Payments
    payments: IntRange = Field(default_factory=lambda: IntRange(min=15, max=25))
    amount_sat: FloatRange = Field(
        default_factory=lambda: FloatRange(min=10_000, max=2_000_000),
        description="payment amounts, log-uniform on this range (with amount_share, the "
        "range a sized amount must fall in)",
    )
    amount_share: FloatRange | None = Field(
        default=None,
        description="size each payment as a share of the largest amount its sender could "
        "send to its target in the scenario's world at the start (a max flow over the true "
        "balances), drawn uniformly from this range, so that most payments are feasible and "
        "the hard part is finding the liquidity; None draws amounts from amount_sat alone "
        "(corpus/difficulty.py, DIFFICULTIES)",
    )
    max_parts: int = Field(default=16, ge=1)
    max_attempts: int = Field(default=40, ge=1)
    fee_limit_ppm: float = Field(default=10_000, ge=0)
    fee_limit_base_msat: int = Field(default=10_000, ge=0)
    final_cltv_delta: int = Field(default=40, ge=1)
    cltv_limit_delta: int = Field(default=2016, ge=2)

    def switch_fields(self) -> dict[str, Any]:
        """The scenario fields that switch arenas on, as the generator writes them
        (and as JSON data, where the arena records' switch paths point)."""
        return {
            "traffic": {"events_per_hour": self.events_per_hour,
                        "median_shift_sat": self.median_shift_sat},
            "atomic_mpp": self.atomic_mpp,
            "attribution": self.attribution.model_dump(),
        }

    @model_validator(mode="after")
    def _within_the_mpp_timeout(self) -> Self:
        # go/scenario's MPPTimeoutSec: the simulator does not time held
        # shards out, so no payment's rounds may outlast the timeout.
        if self.atomic_mpp and self.max_attempts * self.attempt_latency_s > MPP_TIMEOUT_S:
            raise ValueError(
                f"max_attempts {self.max_attempts} rounds of attempt_latency_s "
                f"{self.attempt_latency_s:g} s could hold shards past lnd's MPP timeout of "
                f"{MPP_TIMEOUT_S} s, which the simulator does not play: lower either")
        return self

    @field_validator("amount_share")
    @classmethod
    def _a_share(cls, value: FloatRange | None) -> FloatRange | None:
        if value is not None and not 0 < value.min <= value.max <= 1:
            raise ValueError(f"amount_share {value.min},{value.max} is not within (0, 1]")
        return value

    @field_validator("start_time")
    @classmethod
    def _rfc3339(cls, value: str) -> str:
        if datetime.fromisoformat(value).tzinfo is None:
            raise ValueError(f"start_time {value!r} lacks a UTC offset (RFC 3339)")
        return value


class SyntheticGraphSpec(_Settings):
    """A synthetic graph calibrated to the Lightning network (see topology.py)."""

    kind: Literal["synthetic"] = "synthetic"
    nodes: int = Field(ge=10)


class ImportedGraphSpec(_Settings):
    """A real graph imported from lncli describegraph or CLN listchannels JSON."""

    kind: Literal["imported"] = "imported"
    file: str = Field(description="path of the dump (.json or .json.gz), as given")
    format: Literal["auto", "lncli", "listchannels"] = "auto"
    largest_component: bool = True


GraphSpec = Annotated[SyntheticGraphSpec | ImportedGraphSpec, Field(discriminator="kind")]


class SenderSettings(_Settings):
    """Which node sends: well connected, but no top hub (payments from the best
    connected node are too easy, from a leaf mostly hopeless)."""

    min_channels: int = Field(default=5, ge=1)
    min_capacity_sat: int = Field(
        default=10_000_000, ge=0, description="total capacity of the sender's channels"
    )
    exclude_top_share: float = Field(
        default=0.03, ge=0, lt=1, description="share of nodes, by degree, never chosen"
    )
    min_reachable_share: float = Field(
        default=0.5, ge=0, le=1,
        description="share of the nodes the graph's core reaches that the sender must reach "
        "(the core: the largest strongly connected component along enabled directions)",
    )


def hard_rules() -> Rules:
    """The hard preset's rules: lnd's channel state as real_node_rules has it,
    with more of the uncertainty a router can learn about. A third of the nodes
    accept 30 HTLCs and a quarter of the directions carry 20 to 40 of others',
    so about one direction in twenty-three is full for the whole scenario and
    fails without an update; a fifth of the nodes go offline for a quarter of
    an hour on average, and come back; the commitment's fee rate is lnd's cap
    for anchor channels (10 sat/vB), so a funder keeps 7,100 sat or more back
    besides its reserve. A router that remembers what failed and why, and when to try
    again, closes the gap; amounts alone (amount_share) no longer make it."""
    return Rules(
        reserve_share=0.01, dust_limit_sat=354, commit_feerate_sat_per_kw=2500, anchors_sat=660,
        htlc_slots=HtlcSlots(large_limit=483, small_limit=30, small_share=0.33,
                             busy_share=0.25, busy_htlcs_min=20, busy_htlcs_max=40),
        peers=Peers(flaky_share=0.2, online_mean_s=3600, offline_mean_s=900),
    )


class Difficulty(_Settings):
    """A difficulty preset: the share of what the network holds each payment
    is sized at, and the rules real nodes enforce that the world plays."""

    amount_share: FloatRange
    rules: Rules


#: The generator's difficulty presets, from payments far below what the
#: network holds to payments near its limit, with more uncertainty for hard.
DIFFICULTIES: Final[dict[str, Difficulty]] = {
    "easy": Difficulty(amount_share=FloatRange(min=0.02, max=0.2), rules=real_node_rules()),
    "medium": Difficulty(amount_share=FloatRange(min=0.1, max=0.6), rules=real_node_rules()),
    "hard": Difficulty(amount_share=FloatRange(min=0.4, max=0.95), rules=hard_rules()),
}


def arena_switched_on(arena: Arena, settings: ArenaSettings) -> bool:
    return switched_on(arena_spec(arena), settings.switch_fields())


def default_arena_settings(arena: Arena) -> ArenaSettings:
    """Common defaults with the arena's own switch on (its record's defaults)."""
    return ArenaSettings.model_validate(
        {**ArenaSettings().model_dump(), **arena_spec(arena).defaults}
    )


def default_arenas() -> dict[Arena, ArenaSettings]:
    return {arena: default_arena_settings(arena) for arena in ARENAS}


class GeneratorSettings(_Settings):
    seed: int = Field(default=1, ge=0)
    graphs: list[GraphSpec] = Field(
        default_factory=lambda: [SyntheticGraphSpec(nodes=500)],
        min_length=1,
        description="one graph per entry; scenarios use them in turn",
    )
    split_sizes: dict[Split, int] = Field(
        default_factory=lambda: dict.fromkeys(SPLITS, 2),
        description="scenarios per arena in each split",
    )
    arenas: dict[Arena, ArenaSettings] = Field(default_factory=default_arenas, min_length=1)
    sender: SenderSettings = Field(default_factory=SenderSettings)

    @model_validator(mode="after")
    def _arenas_switched_on(self) -> Self:
        for arena, settings in self.arenas.items():
            if not arena_switched_on(arena, settings):
                raise ValueError(f"arena {arena} needs {arena_spec(arena).needs}")
        missing = [s for s in SPLITS if s not in self.split_sizes]
        if missing:
            raise ValueError(f"split_sizes lacks {missing}")
        return self

    def arena_order(self) -> list[Arena]:
        """The arenas in their canonical order (so output does not depend on dict order)."""
        return [a for a in ARENAS if a in self.arenas]
