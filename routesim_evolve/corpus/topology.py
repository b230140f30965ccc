"""Synthetic channel graphs calibrated to the public Lightning network.

What is calibrated, and against what (mainnet gossip of 2021-04-16, 8.8k nodes,
37k channels, see /work/shared/data/README.md, and the implementations' defaults):

- degree: most nodes have one or two channels (60 % on mainnet) and a few hubs
  have hundreds. Preferential attachment gives that power-law tail: every new
  node opens mostly one or two channels, to peers chosen by their degree; a
  "rich club" pass then adds channels between well-connected nodes, as the
  mainnet core is densely meshed.
- capacity: log-normal around a 1.3M sat median (rounded to 1000 sat), more
  between hubs.
- policies at the implementations' default spikes: cltv delta 80 (lnd), 144
  (older lnd, eclair), 40 and 34 (Core Lightning); base fee 1000 msat or 0; fee
  rate 1–1000 ppm, log-uniform with spikes at 1, 10, 100 and 1000; htlc_min 1 sat;
  htlc_max ~99 % of capacity or absent; a few directions disabled or unannounced.

Everything is drawn from one `random.Random` seeded by the caller, so a graph is
a pure function of (nodes, seed, label).
"""

from __future__ import annotations

import hashlib
import math
import random
from typing import Final

from routesim_evolve.corpus.schema import FORMAT_GRAPH, Channel, Graph, Node, Policy

MEDIAN_CAPACITY_SAT: Final = 1_300_000
CAPACITY_SIGMA: Final = 1.1
MIN_CAPACITY_SAT: Final = 20_000
MAX_CAPACITY_SAT: Final = 100_000_000
# Hub-to-hub channels are larger on mainnet; e^0.5 ≈ 1.65 × the median.
RICH_CLUB_CAPACITY_BOOST: Final = 0.5

# Channels a newly arriving node opens, with their weights: mostly 1 or 2.
OPENED_CHANNELS: Final = ((1, 0.62), (2, 0.18), (3, 0.08), (4, 0.05), (6, 0.04), (10, 0.03))
# Fully meshed nodes the attachment process starts from.
SEED_CORE: Final = 4
# Weight every node has before it has channels, so newcomers can be picked too.
ATTACHMENT_OFFSET: Final = 0.6
# Extra channels among well-connected nodes, per node of the graph.
RICH_CLUB_CHANNELS_PER_NODE: Final = 0.35

CLTV_DELTAS: Final = ((80, 0.32), (144, 0.25), (40, 0.25), (34, 0.1), (18, 0.03), (100, 0.03),
                      (200, 0.02))
BASE_FEES_MSAT: Final = ((1000, 0.6), (0, 0.3), (1, 0.05), (500, 0.03), (2000, 0.02))
FEE_RATE_SPIKES: Final = ((1, 0.2), (10, 0.08), (100, 0.1), (1000, 0.05))
ZERO_FEE_RATE_SHARE: Final = 0.02
HTLC_MAX_NEAR_CAPACITY_SHARE: Final = 0.55  # htlc_max = 99 % of capacity
HTLC_MAX_ABSENT_SHARE: Final = 0.35  # else a random share of capacity
HTLC_MIN_ONE_MSAT_SHARE: Final = 0.1  # else 1 sat
DISABLED_SHARE: Final = 0.03
#: Channel ends announcing an inbound fee (lnd 0.18+): about 2,000 of the
#: public network's ~100,000 in 2025, nearly all a discount of part of the
#: node's own fee rate on the channel.
INBOUND_DISCOUNT_SHARE: Final = 0.01
UNANNOUNCED_SHARE: Final = 0.01
FIRST_BLOCK: Final = 600_000


def node_id(label: str) -> str:
    """A 33-byte compressed-key-looking id: a parity byte and a sha256 of the label."""
    digest = hashlib.sha256(label.encode()).hexdigest()
    parity = "02" if int(digest[-1], 16) % 2 == 0 else "03"
    return parity + digest


def weighted(rng: random.Random, table: tuple[tuple[int, float], ...]) -> int:
    values, weights = zip(*table, strict=True)
    return rng.choices(values, weights=weights)[0]


def attachment_pairs(rng: random.Random, nodes: int) -> list[tuple[int, int]]:
    """Channels as (smaller, larger) index pairs, by preferential attachment plus a
    rich-club pass; no pair twice, no self channel."""
    club = _Club(nodes)
    core = min(SEED_CORE, nodes)
    for a in range(core):
        for b in range(a + 1, core):
            club.connect(a, b)
    for newcomer in range(core, nodes):
        wanted = min(weighted(rng, OPENED_CHANNELS), newcomer)
        opened = 0
        for _ in range(wanted * 4):  # a few retries when a pick repeats
            if opened == wanted:
                break
            opened += club.connect(newcomer, club.pick_by_degree(rng, newcomer))
    hub_channels = round(RICH_CLUB_CHANNELS_PER_NODE * nodes)
    added = 0
    for _ in range(hub_channels * 4):
        if added == hub_channels:
            break
        added += club.connect(club.pick_hub(rng), club.pick_hub(rng))
    return sorted(club.pairs)


class _Club:
    """The growing graph, with O(1) picks proportional to degree: `endpoints`
    lists every node once per channel it has."""

    def __init__(self, nodes: int) -> None:
        self.pairs: set[tuple[int, int]] = set()
        self.degree = [0] * nodes
        self.endpoints: list[int] = []

    def connect(self, a: int, b: int) -> bool:
        key = (min(a, b), max(a, b))
        if a == b or key in self.pairs:
            return False
        self.pairs.add(key)
        for end in key:
            self.degree[end] += 1
            self.endpoints.append(end)
        return True

    def pick_by_degree(self, rng: random.Random, among: int) -> int:
        """A node below `among`, with probability ∝ degree + ATTACHMENT_OFFSET."""
        by_degree = len(self.endpoints)
        if rng.random() * (by_degree + ATTACHMENT_OFFSET * among) < by_degree:
            return rng.choice(self.endpoints)
        return rng.randrange(among)

    def pick_hub(self, rng: random.Random) -> int:
        """A node with probability ∝ degree² (a degree-weighted pick, kept with
        probability degree / max degree): hubs meet hubs."""
        top = max(self.degree)
        while True:
            node = rng.choice(self.endpoints)
            if rng.random() * top < self.degree[node]:
                return node


def draw_capacity(rng: random.Random, hub_channel: bool) -> int:
    mu = math.log(MEDIAN_CAPACITY_SAT) + (RICH_CLUB_CAPACITY_BOOST if hub_channel else 0.0)
    raw = rng.lognormvariate(mu, CAPACITY_SIGMA)
    clipped = min(MAX_CAPACITY_SAT, max(MIN_CAPACITY_SAT, raw))
    return round(clipped / 1000) * 1000


def draw_fee_rate(rng: random.Random) -> int:
    """Spikes at 1, 10, 100, 1000 ppm; otherwise log-uniform on [1, 1000]."""
    if rng.random() < ZERO_FEE_RATE_SHARE:
        return 0
    spike_share = sum(w for _, w in FEE_RATE_SPIKES)
    roll = rng.random()
    if roll < spike_share:
        return weighted(rng, FEE_RATE_SPIKES)
    return max(1, round(math.exp(rng.uniform(0, math.log(1000)))))


def draw_htlc_max(rng: random.Random, capacity_sat: int) -> int | None:
    roll = rng.random()
    if roll < HTLC_MAX_NEAR_CAPACITY_SHARE:
        return capacity_sat * 990
    if roll < HTLC_MAX_NEAR_CAPACITY_SHARE + HTLC_MAX_ABSENT_SHARE:
        return None
    return int(capacity_sat * 1000 * rng.uniform(0.1, 0.5))


def draw_policy(rng: random.Random, capacity_sat: int) -> Policy | None:
    if rng.random() < UNANNOUNCED_SHARE:
        return None
    return Policy(
        fee_base_msat=weighted(rng, BASE_FEES_MSAT),
        fee_rate_ppm=draw_fee_rate(rng),
        cltv_delta=weighted(rng, CLTV_DELTAS),
        htlc_min_msat=1 if rng.random() < HTLC_MIN_ONE_MSAT_SHARE else 1000,
        htlc_max_msat=draw_htlc_max(rng, capacity_sat),
        disabled=rng.random() < DISABLED_SHARE,
    )


def with_inbound_discounts(rng: random.Random, channels: list[Channel]) -> list[Channel]:
    """Give an INBOUND_DISCOUNT_SHARE of the announced directions an inbound
    discount of 20–100 % of their own fee rate, from their own stream so that
    every other draw of the graph stays as it was."""
    out = []
    for channel in channels:
        policies = []
        for policy in (channel.policy1, channel.policy2):
            roll, share = rng.random(), rng.uniform(0.2, 1.0)
            if policy is not None and policy.fee_rate_ppm > 0 and roll < INBOUND_DISCOUNT_SHARE:
                policy = policy.model_copy(
                    update={"inbound_fee_rate_ppm": -round(policy.fee_rate_ppm * share)})
            policies.append(policy)
        out.append(channel.model_copy(update={"policy1": policies[0], "policy2": policies[1]}))
    return out


def synthetic_graph(nodes: int, seed: int, label: str) -> Graph:
    """A calibrated synthetic graph of `nodes` nodes; `label` names the node ids."""
    rng = random.Random(seed)
    ids = [node_id(f"{label}/node-{i}") for i in range(nodes)]
    pairs = attachment_pairs(rng, nodes)
    degree = [0] * nodes
    for a, b in pairs:
        degree[a] += 1
        degree[b] += 1
    hub_degree = sorted(degree)[int(0.9 * (nodes - 1))]
    channels = [
        _channel(rng, index, ids[a], ids[b], degree[a] > hub_degree and degree[b] > hub_degree)
        for index, (a, b) in enumerate(pairs)
    ]
    channels = with_inbound_discounts(random.Random(f"{seed}/inbound"), channels)
    return Graph(
        format=FORMAT_GRAPH,
        nodes=[Node(id=ids[i], alias=f"{label}-{i}") for i in range(nodes)],
        channels=channels,
    )


def _channel(rng: random.Random, index: int, a: str, b: str, hub_channel: bool) -> Channel:
    capacity = draw_capacity(rng, hub_channel)
    node1, node2 = sorted((a, b))  # lnd's order: smaller key first
    return Channel(
        scid=f"{FIRST_BLOCK + index}x{rng.randrange(1, 3000)}x{rng.randrange(0, 2)}",
        node1=node1,
        node2=node2,
        capacity_sat=capacity,
        policy1=draw_policy(rng, capacity),
        policy2=draw_policy(rng, capacity),
    )
