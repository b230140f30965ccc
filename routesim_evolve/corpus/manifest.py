"""`corpus/manifest.json`: what a corpus contains, stamped by the generator.

Prompts and reports quote these numbers (e.g. "10 % of failures arrive
unreadable"), so every rate is the one actually written into the scenario
files of the arena, not a default someone assumed. `summarize_arenas` computes
them from the scenarios themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field

from routesim_evolve.corpus.graphtools import GraphStats
from routesim_evolve.corpus.schema import ARENAS, Arena, Rules, Scenario, Split
from routesim_evolve.corpus.settings import AttributionRates, GeneratorSettings

MANIFEST_FILE: Final = "manifest.json"
FORMAT_MANIFEST: Final = "routesim-corpus-manifest/1"


class _Entry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GeneratorStamp(_Entry):
    """Which generator made the corpus, and how to make it again."""

    module: str = Field(description="the generator's Python module")
    version: str = Field(description="bumped whenever the same settings give other files")
    command: str | None = Field(
        default=None, description="the command line that made the corpus, when known"
    )


class GraphSource(_Entry):
    """Where a graph came from."""

    kind: Literal["synthetic", "imported"]
    synthetic_nodes: int | None = Field(default=None, description="requested size (synthetic)")
    import_file: str | None = Field(default=None, description="the imported dump, as given")
    import_format: Literal["lncli", "listchannels"] | None = None
    import_sha256: str | None = Field(default=None, description="sha256 of the imported dump")
    largest_component: bool | None = Field(
        default=None, description="whether the import kept only the largest component"
    )


class GraphEntry(_Entry):
    name: str
    file: str = Field(description="path relative to the corpus root, e.g. graphs/x.json")
    sha256: str = Field(description="sha256 of the graph file as written")
    source: GraphSource
    stats: GraphStats


class ScenarioEntry(_Entry):
    name: str
    file: str = Field(description="path relative to the corpus root, e.g. val/drift-001.json")
    arena: Arena
    graph: str = Field(description="the graph's file relative to the corpus root")
    seed: int
    source: str = Field(description="the sender's node id")
    sender_channels: int
    payments: int


class SplitEntry(_Entry):
    scenarios: list[ScenarioEntry]
    counts_per_arena: dict[Arena, int]


class DriftLevel(_Entry):
    events_per_hour: float = Field(description="background liquidity shifts per virtual hour")
    median_shift_sat: float = Field(description="median size of one shift (log-normal, σ 0.8)")


class StaleGossip(_Entry):
    share: float = Field(description="share of announced directions that are out of date")
    fee_rate_factor: float
    base_fee_add_msat: int
    cltv_add: int


class LiquidityModel(_Entry):
    model: str = Field(description="how hidden balances are drawn, in words")
    bimodal_scale_sat: float
    uniform_share: float
    sender_balances: str = Field(description="how the sender's own balances are set, in words")


class NumberRange(_Entry):
    min: float
    max: float


class ArenaRates(_Entry):
    """The settings really written into the arena's scenario files (all splits)."""

    scenarios: int
    attribution: AttributionRates
    drift: DriftLevel
    stale_gossip: StaleGossip
    liquidity: LiquidityModel
    atomic_mpp: bool
    rules: Rules | None = Field(
        default=None, description="the rules real nodes enforce that the scenarios play")
    max_parts: int = Field(description="MaxParts: shards in flight at once")
    max_attempts: int
    fee_limit_ppm: float
    fee_limit_base_msat: int
    final_cltv_delta: int
    payments_per_scenario: NumberRange
    amount_sat: NumberRange = Field(description="smallest and largest payment amount, sat")
    median_amount_sat: float


class Manifest(_Entry):
    format: Literal["routesim-corpus-manifest/1"] = FORMAT_MANIFEST
    generator: GeneratorStamp
    seed: int
    settings: GeneratorSettings = Field(description="the generator's full settings")
    graphs: list[GraphEntry]
    splits: dict[Split, SplitEntry]
    arenas: dict[Arena, ArenaRates] = Field(
        description="per arena, the rates the scenario files really carry"
    )

    def degraded_attribution(self) -> AttributionRates | None:
        """The attribution arena's rates, None if the corpus has no such arena."""
        rates = self.arenas.get("attribution")
        return rates.attribution if rates else None


# ---------------------------------------------------------------------------


def summarize_arenas(scenarios: Iterable[Scenario]) -> dict[Arena, ArenaRates]:
    """Per arena, the rates of its scenarios. A corpus arena has one setting per
    rate; scenarios that disagree are a generator bug, reported loudly."""
    by_arena: dict[str, list[Scenario]] = {}
    for sc in scenarios:
        by_arena.setdefault(sc.arena, []).append(sc)
    return {
        arena: _arena_rates(by_arena[arena]) for arena in ARENAS if arena in by_arena
    }


def _arena_rates(scenarios: list[Scenario]) -> ArenaRates:
    first = scenarios[0]
    for sc in scenarios[1:]:
        if _rate_settings(sc) != _rate_settings(first):
            raise ValueError(f"scenarios {first.name} and {sc.name} disagree on the arena's rates")
    amounts = sorted(p.amount_msat / 1000 for sc in scenarios for p in sc.payments)
    counts = [len(sc.payments) for sc in scenarios]
    has_local = any(sc.local_balances_msat for sc in scenarios)
    return ArenaRates(
        scenarios=len(scenarios),
        attribution=AttributionRates(**first.attribution.model_dump()),
        drift=DriftLevel(
            events_per_hour=first.traffic.events_per_hour,
            median_shift_sat=first.traffic.median_shift_sat if first.traffic.events_per_hour else 0,
        ),
        stale_gossip=StaleGossip(
            share=first.gossip.stale_share,
            fee_rate_factor=first.gossip.stale_fee_rate_factor,
            base_fee_add_msat=first.gossip.stale_base_fee_add_msat,
            cltv_add=first.gossip.stale_cltv_add,
        ),
        liquidity=LiquidityModel(
            model="per channel: uniform on [0, capacity] with probability uniform_share, "
            "else lnd's bimodal density with scale bimodal_scale_sat",
            bimodal_scale_sat=first.liquidity.bimodal_scale_sat,
            uniform_share=first.liquidity.uniform_share,
            sender_balances="listed in local_balances_msat" if has_local
            else "uniform on [0, capacity], drawn by the simulator",
        ),
        atomic_mpp=first.atomic_mpp,
        rules=first.rules,
        max_parts=first.defaults.max_parts,
        max_attempts=first.defaults.max_attempts,
        fee_limit_ppm=first.defaults.fee_limit_ppm,
        fee_limit_base_msat=first.defaults.fee_limit_base_msat,
        final_cltv_delta=first.defaults.final_cltv_delta,
        payments_per_scenario=NumberRange(min=min(counts), max=max(counts)),
        amount_sat=NumberRange(min=amounts[0], max=amounts[-1]),
        median_amount_sat=amounts[len(amounts) // 2],
    )


def _rate_settings(sc: Scenario) -> tuple[object, ...]:
    return (
        sc.attribution, sc.traffic, sc.gossip, sc.liquidity, sc.atomic_mpp, sc.rules,
        sc.defaults,
    )
