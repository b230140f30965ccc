"""Small graph computations the generator, the importers and the manifest share:
degrees, reachability along announced directions, connected components."""

from __future__ import annotations

import statistics
from collections import Counter, deque
from collections.abc import Iterable

from pydantic import BaseModel, Field

from routesim_evolve.corpus.schema import Channel, Graph


def degrees(graph: Graph) -> Counter[str]:
    """Channels per node (nodes without channels count 0)."""
    count: Counter[str] = Counter({n.id: 0 for n in graph.nodes})
    for c in graph.channels:
        count[c.node1] += 1
        count[c.node2] += 1
    return count


def forward_neighbours(graph: Graph, source: str) -> dict[str, list[str]]:
    """Who can forward to whom: a → b when a announced an enabled policy toward b.
    The source's own channels count in both directions of its own sending, since
    the sender needs no announced policy of its own to pay over them."""
    out: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
    for c in graph.channels:
        for node in (c.node1, c.node2):
            policy = c.policy_from(node)
            usable = policy is not None and not policy.disabled
            if usable or node == source:
                out[node].append(c.peer_of(node))
    return out


def reachable_from(graph: Graph, source: str) -> set[str]:
    """Nodes a payment from `source` can reach along announced, enabled directions
    (the source itself excluded)."""
    neighbours = forward_neighbours(graph, source)
    seen = {source}
    queue = deque([source])
    while queue:
        node = queue.popleft()
        for peer in neighbours[node]:
            if peer not in seen:
                seen.add(peer)
                queue.append(peer)
    seen.discard(source)
    return seen


def components(node_ids: Iterable[str], channels: Iterable[Channel]) -> list[set[str]]:
    """Connected components of the undirected channel graph, largest first."""
    parent = {n: n for n in node_ids}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for c in channels:
        parent[root(c.node1)] = root(c.node2)
    groups: dict[str, set[str]] = {}
    for n in parent:
        groups.setdefault(root(n), set()).add(n)
    # Ties broken by the smallest id so that the result does not depend on set order.
    return sorted(groups.values(), key=lambda g: (-len(g), min(g)))


def largest_component(graph: Graph) -> Graph:
    """The graph restricted to its largest connected component."""
    keep = components((n.id for n in graph.nodes), graph.channels)[0]
    return Graph(
        format=graph.format,
        nodes=[n for n in graph.nodes if n.id in keep],
        channels=[c for c in graph.channels if c.node1 in keep],
    )


class GraphStats(BaseModel):
    """What a prompt or report may want to know about a graph's shape."""

    nodes: int
    channels: int
    share_degree_1_2: float = Field(description="share of nodes with one or two channels")
    median_degree: float
    max_degree: int
    median_capacity_sat: float
    total_capacity_btc: float
    disabled_direction_share: float = Field(
        description="share of announced directions announced disabled"
    )
    missing_policy_share: float = Field(description="share of directions with no policy")


def graph_stats(graph: Graph) -> GraphStats:
    degree = list(degrees(graph).values())
    policies = [p for c in graph.channels for p in (c.policy1, c.policy2)]
    announced = [p for p in policies if p is not None]
    capacities = [c.capacity_sat for c in graph.channels]
    return GraphStats(
        nodes=len(graph.nodes),
        channels=len(graph.channels),
        share_degree_1_2=round(sum(1 for d in degree if 1 <= d <= 2) / len(degree), 4),
        median_degree=float(statistics.median(degree)),
        max_degree=max(degree),
        median_capacity_sat=float(statistics.median(capacities)) if capacities else 0.0,
        total_capacity_btc=round(sum(capacities) / 1e8, 4),
        disabled_direction_share=round(
            sum(1 for p in announced if p.disabled) / max(1, len(announced)), 4
        ),
        missing_policy_share=round(
            (len(policies) - len(announced)) / max(1, len(policies)), 4
        ),
    )
