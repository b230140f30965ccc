"""Generate a corpus directory from `GeneratorSettings`:

    OUT/graphs/NAME.json        each graph once (synthetic or imported)
    OUT/{train,val,test}/ARENA-NNN.json   scenarios, naming ../graphs/NAME.json
    OUT/manifest.json           what the corpus contains (see manifest.py)

Everything is a pure function of the settings: every random draw comes from a
`random.Random` seeded by `derive_seed(settings.seed, labels...)`, so the same
settings give byte-identical files, and adding a split or an arena does not
change the draws of the others.

The sender of each scenario is a well-connected node that is no top hub
(`SenderSettings`); targets are drawn among the nodes it can reach along
announced, enabled directions, so payments are neither trivial nor hopeless by
construction (whether they succeed depends on the hidden liquidity). With an
arena's `amount_share`, payments are sized by what the network holds toward
their targets (difficulty.py).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import random
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ConfigDict

from routesim_evolve.corpus.difficulty import candidate_pool, size_payments, starting_flows
from routesim_evolve.corpus.graphtools import Reach, degrees, graph_stats
from routesim_evolve.corpus.importers import import_graph_file
from routesim_evolve.corpus.load import GRAPHS_DIR, CorpusError, load_scenarios
from routesim_evolve.corpus.manifest import (
    MANIFEST_FILE,
    GeneratorStamp,
    GraphEntry,
    GraphSource,
    Manifest,
    ScenarioEntry,
    SplitEntry,
    summarize_arenas,
)
from routesim_evolve.corpus.schema import (
    FORMAT_SCENARIO,
    SPLITS,
    Arena,
    Attribution,
    Clock,
    Gossip,
    Graph,
    Liquidity,
    Payment,
    PaymentDefaults,
    Policy,
    Scenario,
    Split,
    Traffic,
)
from routesim_evolve.corpus.settings import (
    ArenaSettings,
    GeneratorSettings,
    ImportedGraphSpec,
    SenderSettings,
    SyntheticGraphSpec,
)
from routesim_evolve.corpus.topology import synthetic_graph

# Bump whenever the same settings would give different files.
GENERATOR_VERSION: Final = "8"
GENERATOR_MODULE: Final = __name__


class GenerationError(Exception):
    """The settings cannot give a corpus (e.g. no node qualifies as sender)."""


class BuiltGraph(BaseModel):
    """A graph made for the corpus, before it is written."""

    model_config = ConfigDict(frozen=True)

    name: str
    graph: Graph
    source: GraphSource

    @property
    def file(self) -> str:
        return f"{GRAPHS_DIR}/{self.name}.json"


# ---------------------------------------------------------------------------
# Seeds


def derive_seed(master: int, *labels: object) -> int:
    """A seed for one purpose (e.g. `("scenario", "val", "drift", 1)`), independent
    of every other purpose's seed; below 2^63 so every reader takes it."""
    text = "/".join([str(master), *(str(label) for label in labels)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


# ---------------------------------------------------------------------------
# Graphs


def build_graph(spec: SyntheticGraphSpec | ImportedGraphSpec, index: int, seed: int) -> BuiltGraph:
    if isinstance(spec, SyntheticGraphSpec):
        name = f"synthetic-{index + 1:02d}-n{spec.nodes}"
        return BuiltGraph(
            name=name,
            graph=synthetic_graph(spec.nodes, derive_seed(seed, "graph", index), name),
            source=GraphSource(kind="synthetic", synthetic_nodes=spec.nodes),
        )
    imported = import_graph_file(spec.file, spec.format, spec.largest_component)
    stem = Path(spec.file).name.removesuffix(".gz").removesuffix(".json")
    return BuiltGraph(
        name=f"imported-{index + 1:02d}-{stem}",
        graph=imported.graph,
        source=GraphSource(
            kind="imported",
            import_file=imported.file,
            import_format=imported.format,
            import_sha256=imported.sha256,
            largest_component=imported.largest_component,
        ),
    )


# ---------------------------------------------------------------------------
# Sender and payments


def sender_candidates(graph: Graph, settings: SenderSettings) -> list[str]:
    """Nodes with at least `min_channels` channels and `min_capacity_sat` in them,
    the top hubs left out; best connected first."""
    degree = degrees(graph)
    capacity: dict[str, int] = dict.fromkeys(degree, 0)
    for c in graph.channels:
        capacity[c.node1] += c.capacity_sat
        capacity[c.node2] += c.capacity_sat
    ranked = sorted(degree, key=lambda n: (-degree[n], n))
    skip = math.ceil(settings.exclude_top_share * len(ranked))
    return [
        n
        for n in ranked[skip:]
        if degree[n] >= settings.min_channels and capacity[n] >= settings.min_capacity_sat
    ]


def choose_sender(
    rng: random.Random, graph: Graph, reach: Reach, settings: SenderSettings
) -> tuple[str, list[str]]:
    """A sender that reaches enough of what the graph allows, and the nodes
    it reaches (sorted). Enough is `min_reachable_share` of the nodes the
    graph's core (its largest strongly connected component along enabled
    directions) can reach: a share of the whole graph would ask for more
    than real snapshots allow, where many directions carry no policy."""
    candidates = sender_candidates(graph, settings)
    rng.shuffle(candidates)
    needed = settings.min_reachable_share * len(reach.core_reach)
    for node in candidates:
        if not reach.feeds_core(node):
            continue
        reached = reach.from_sender(node)
        if reached and len(reached) >= needed:
            return node, sorted(reached)
    raise GenerationError(
        f"no node with ≥ {settings.min_channels} channels of ≥ {settings.min_capacity_sat} sat "
        f"outside the top {settings.exclude_top_share:.0%} hubs reaches "
        f"{settings.min_reachable_share:.0%} of the {len(reach.core_reach)} nodes the graph's "
        f"core ({len(reach.core)} nodes paying each other along enabled directions) reaches "
        f"({len(candidates)} qualified by channels and capacity). Loosen the sender: "
        "--sender-min-channels, --sender-min-capacity-sat, --sender-exclude-top-share, or "
        "sender.min_reachable_share in a --settings file"
    )


def draw_amount_msat(rng: random.Random, settings: ArenaSettings) -> int:
    """Log-uniform on the amount range, whole satoshis."""
    low, high = math.log(settings.amount_sat.min), math.log(settings.amount_sat.max)
    return max(1, round(math.exp(rng.uniform(low, high)))) * 1000


def draw_payments(
    rng: random.Random, targets: Sequence[str], settings: ArenaSettings
) -> list[Payment]:
    """The scenario's payments; with amount_share, the pool of candidates
    that `difficulty.size_payments` sizes once the flows are known."""
    count = rng.randint(settings.payments.min, settings.payments.max)
    if settings.amount_share is not None:
        return candidate_pool(rng, targets, count, settings)
    return [
        Payment(target=rng.choice(targets), amount_msat=draw_amount_msat(rng, settings))
        for _ in range(count)
    ]


def draw_local_balances(
    rng: random.Random, graph: Graph, sender: str, settings: ArenaSettings
) -> dict[str, int]:
    """The sender's balance per own channel, when the settings fix a share range."""
    share = settings.local_balance_share
    if share is None:
        return {}
    own = [c for c in graph.channels if sender in (c.node1, c.node2)]
    return {
        c.scid: int(c.capacity_sat * 1000 * rng.uniform(share.min, share.max)) for c in own
    }


#: The sender's own policy where the graph announces none or a disabled one:
#: lnd's defaults (1,000 msat base, 1 ppm, cltv delta 80, 1,000 msat
#: minimum HTLC), the maximum HTLC left to the capacity. A real node always
#: knows its own policies; without one lnd's pathfinding cannot use the
#: channel at all, while a candidate could.
DEFAULT_SENDER_POLICY = Policy(fee_base_msat=1000, fee_rate_ppm=1, cltv_delta=80,
                               htlc_min_msat=1000)


def sender_policies(graph: Graph, sender: str) -> dict[str, Policy]:
    """The defaults for the sender's channels without an enabled policy."""
    missing = {}
    for c in graph.channels:
        if sender in (c.node1, c.node2):
            own = c.policy_from(sender)
            if own is None or own.disabled:
                missing[c.scid] = DEFAULT_SENDER_POLICY
    return missing


# ---------------------------------------------------------------------------
# Scenarios


class ScenarioPlan(BaseModel):
    """Which scenario to make: its place in the corpus and its graph."""

    model_config = ConfigDict(frozen=True)

    split: Split
    arena: Arena
    number: int
    graph_index: int

    @property
    def name(self) -> str:
        return f"{self.split}-{self.arena}-{self.number:03d}"

    @property
    def file(self) -> str:
        return f"{self.split}/{self.arena}-{self.number:03d}.json"


def plan_scenarios(settings: GeneratorSettings) -> list[ScenarioPlan]:
    """Every scenario of the corpus; graphs are used in turn within an arena."""
    return [
        ScenarioPlan(split=split, arena=arena, number=k + 1, graph_index=k % len(settings.graphs))
        for split in SPLITS
        for arena in settings.arena_order()
        for k in range(settings.split_sizes[split])
    ]


def build_scenario(
    plan: ScenarioPlan, settings: GeneratorSettings, built: BuiltGraph, reach: Reach | None = None
) -> Scenario:
    """One scenario; `reach` is the graph's Reach, computed once per graph
    by the caller (here otherwise)."""
    reach = reach or Reach(built.graph)
    arena = settings.arenas[plan.arena]
    seed = derive_seed(settings.seed, "scenario", plan.split, plan.arena, plan.number)
    rng = random.Random(seed)
    sender, reachable = choose_sender(rng, built.graph, reach, settings.sender)
    switches = arena.switch_fields()
    return Scenario(
        format=FORMAT_SCENARIO,
        name=plan.name,
        arena=plan.arena,
        seed=seed,
        graph=f"../{built.file}",
        source=sender,
        block_height=arena.block_height,
        start_time=datetime.fromisoformat(arena.start_time),
        liquidity=Liquidity(
            bimodal_scale_sat=arena.bimodal_scale_sat, uniform_share=arena.uniform_share
        ),
        local_balances_msat=draw_local_balances(rng, built.graph, sender, arena),
        sender_policies=sender_policies(built.graph, sender),
        gossip=Gossip(
            stale_share=arena.stale_share,
            stale_fee_rate_factor=arena.stale_fee_rate_factor,
            stale_base_fee_add_msat=arena.stale_base_fee_add_msat,
            stale_cltv_add=arena.stale_cltv_add,
        ),
        clock=Clock(
            payment_interval_s=arena.payment_interval_s,
            attempt_latency_s=arena.attempt_latency_s,
        ),
        traffic=Traffic(**switches["traffic"]),
        atomic_mpp=switches["atomic_mpp"],
        attribution=Attribution(**switches["attribution"]),
        rules=arena.rules,
        defaults=PaymentDefaults(
            max_parts=arena.max_parts,
            max_attempts=arena.max_attempts,
            fee_limit_ppm=arena.fee_limit_ppm,
            fee_limit_base_msat=arena.fee_limit_base_msat,
            final_cltv_delta=arena.final_cltv_delta,
            cltv_limit_delta=arena.cltv_limit_delta,
        ),
        payments=draw_payments(rng, reachable, arena),
    )


# ---------------------------------------------------------------------------
# JSON text


def _tidy(value: Any) -> Any:
    """Integral floats as integers (300000, not 300000.0); both readers take either."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _tidy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tidy(v) for v in value]
    return value


def scenario_json(scenario: Scenario) -> str:
    body = scenario.model_dump(mode="json")
    if not scenario.local_balances_msat:
        del body["local_balances_msat"]
    if scenario.rules is None:
        del body["rules"]
    body["payments"] = [p.model_dump(mode="json", exclude_defaults=True) for p in scenario.payments]
    return json.dumps(_tidy(body), indent=1) + "\n"


def graph_json(graph: Graph) -> str:
    """One node or channel a line: readable diffs at a fraction of indent's size."""
    nodes = [n.model_dump(mode="json", exclude_defaults=True) for n in graph.nodes]
    channels = [_channel_body(c.model_dump(mode="json")) for c in graph.channels]
    lines = [
        "{",
        f' "format": {json.dumps(graph.format)},',
        ' "nodes": [',
        ",\n".join("  " + json.dumps(n) for n in nodes),
        " ],",
        ' "channels": [',
        ",\n".join("  " + json.dumps(c) for c in channels),
        " ]",
        "}",
    ]
    return "\n".join(lines) + "\n"


def _channel_body(body: dict[str, Any]) -> dict[str, Any]:
    for key in ("policy1", "policy2"):
        policy = body[key]
        if policy is None:
            continue
        if policy["htlc_max_msat"] is None:
            del policy["htlc_max_msat"]
        if not policy["disabled"]:
            del policy["disabled"]
        for key in ("inbound_fee_base_msat", "inbound_fee_rate_ppm"):
            if not policy[key]:
                del policy[key]
    return body


def manifest_json(manifest: Manifest) -> str:
    return json.dumps(_tidy(manifest.model_dump(mode="json")), indent=1) + "\n"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


# ---------------------------------------------------------------------------
# The corpus


def generate_corpus(
    settings: GeneratorSettings,
    out_dir: str | os.PathLike[str],
    command: str | None = None,
    overwrite: bool = False,
) -> Manifest:
    """Write a corpus to `out_dir` and return its manifest. Refuses to write over
    an existing corpus unless `overwrite` (which first removes its JSON files)."""
    out = Path(out_dir)
    _prepare(out, overwrite)
    graphs = [build_graph(spec, i, settings.seed) for i, spec in enumerate(settings.graphs)]
    reaches = [Reach(built.graph) for built in graphs]
    graph_entries = [_write_graph(out, built) for built in graphs]
    scenarios: dict[Split, list[tuple[ScenarioPlan, Scenario]]] = {s: [] for s in SPLITS}
    for plan in plan_scenarios(settings):
        built = graphs[plan.graph_index]
        scenario = build_scenario(plan, settings, built, reaches[plan.graph_index])
        (out / plan.file).write_text(scenario_json(scenario))
        scenarios[plan.split].append((plan, scenario))
    _check_written(out, [plan for split in SPLITS for plan, _ in scenarios[split]])
    for split in SPLITS:
        scenarios[split] = _sized(out, settings, scenarios[split])
    manifest = Manifest(
        generator=GeneratorStamp(
            module=GENERATOR_MODULE, version=GENERATOR_VERSION, command=command
        ),
        seed=settings.seed,
        settings=settings,
        graphs=graph_entries,
        splits={split: _split_entry(scenarios[split], graphs) for split in SPLITS},
        arenas=summarize_arenas(sc for split in SPLITS for _, sc in scenarios[split]),
    )
    (out / MANIFEST_FILE).write_text(manifest_json(manifest))
    return manifest


def _sized(
    out: Path, settings: GeneratorSettings, planned: list[tuple[ScenarioPlan, Scenario]]
) -> list[tuple[ScenarioPlan, Scenario]]:
    """The scenarios with their payments sized by the flows of their world,
    where their arena asks for it (amount_share), written again."""
    to_size = [(plan, sc) for plan, sc in planned
               if settings.arenas[plan.arena].amount_share is not None]
    if not to_size:
        return planned
    flows = starting_flows([out / plan.file for plan, _ in to_size])
    sized: dict[str, Scenario] = {}
    for (plan, sc), scenario_flows in zip(to_size, flows, strict=True):
        rng = random.Random(derive_seed(settings.seed, "sizes", plan.split, plan.arena,
                                        plan.number))
        payments = size_payments(sc.payments, scenario_flows, settings.arenas[plan.arena], rng)
        sized[plan.file] = sc.model_copy(update={"payments": payments})
        (out / plan.file).write_text(scenario_json(sized[plan.file]))
    _check_written(out, [plan for plan, _ in to_size])
    return [(plan, sized.get(plan.file, sc)) for plan, sc in planned]


def _prepare(out: Path, overwrite: bool) -> None:
    if (out / MANIFEST_FILE).exists():
        if not overwrite:
            raise GenerationError(f"{out} already holds a corpus (overwrite to replace it)")
        for sub in (*SPLITS, GRAPHS_DIR):
            for old in (out / sub).glob("*.json"):
                old.unlink()
        (out / MANIFEST_FILE).unlink()
    for sub in (*SPLITS, GRAPHS_DIR):
        (out / sub).mkdir(parents=True, exist_ok=True)


def _write_graph(out: Path, built: BuiltGraph) -> GraphEntry:
    text = graph_json(built.graph)
    (out / built.file).write_text(text)
    return GraphEntry(
        name=built.name,
        file=built.file,
        sha256=_sha256(text),
        source=built.source,
        stats=graph_stats(built.graph),
    )


def _check_written(out: Path, plans: list[ScenarioPlan]) -> None:
    """Have the Go reader check the very files written, as the simulator will
    read them: a refusal is a generator bug, said so."""
    try:
        load_scenarios([out / plan.file for plan in plans])
    except CorpusError as exc:
        raise GenerationError(f"the generator wrote an invalid file (a bug): {exc}") from exc


def _split_entry(
    planned: list[tuple[ScenarioPlan, Scenario]], graphs: list[BuiltGraph]
) -> SplitEntry:
    degree = {i: degrees(g.graph) for i, g in enumerate(graphs)}
    entries = [
        ScenarioEntry(
            name=sc.name,
            file=plan.file,
            arena=plan.arena,
            graph=graphs[plan.graph_index].file,
            seed=sc.seed,
            source=sc.source,
            sender_channels=degree[plan.graph_index][sc.source],
            payments=len(sc.payments),
        )
        for plan, sc in planned
    ]
    counts: dict[Arena, int] = {}
    for entry in entries:
        counts[entry.arena] = counts.get(entry.arena, 0) + 1
    return SplitEntry(scenarios=entries, counts_per_arena=counts)
