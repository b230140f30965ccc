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


def reachable_from(graph: Graph, source: str) -> set[str]:
    """Nodes a payment from `source` can reach along announced, enabled
    directions, over its own channels whatever their policy (the source
    itself excluded). For many senders of one graph, build one Reach."""
    return Reach(graph).from_sender(source)


class Reach:
    """Who can pay whom on a graph, computed once: the directed graph of
    announced, enabled directions, its largest strongly connected component
    (the core, where every node can pay every other), what the core can
    reach, and which nodes can reach the core. A sender any of whose peers
    can reach the core reaches all the core reaches, since it pays over its
    own channels without a policy of its own."""

    def __init__(self, graph: Graph) -> None:
        self._forward: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
        self._backward: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
        self._peers: dict[str, list[str]] = {n.id: [] for n in graph.nodes}
        for c in graph.channels:
            for node in (c.node1, c.node2):
                peer = c.peer_of(node)
                self._peers[node].append(peer)
                policy = c.policy_from(node)
                if policy is not None and not policy.disabled:
                    self._forward[node].append(peer)
                    self._backward[peer].append(node)
        sccs = strongly_connected(self._forward)
        self.core: set[str] = max(sccs, key=len) if sccs else set()
        self.core_reach = _bfs(self.core, self._forward)
        self._reaches_core = _bfs(self.core, self._backward)

    def feeds_core(self, sender: str) -> bool:
        """True when the sender has a peer that can reach the core."""
        return any(p in self._reaches_core for p in self._peers[sender])

    def from_sender(self, sender: str) -> set[str]:
        """Nodes a payment from `sender` can reach (the sender excluded)."""
        reached = _bfs(set(self._peers[sender]), self._forward, avoid=sender)
        reached.discard(sender)
        return reached


def _bfs(start: Iterable[str], adjacency: dict[str, list[str]], avoid: str = "") -> set[str]:
    """`start` and every node reachable from it, not passing through `avoid`."""
    seen = set(start)
    queue = deque(seen)
    while queue:
        for peer in adjacency[queue.popleft()]:
            if peer not in seen and peer != avoid:
                seen.add(peer)
                queue.append(peer)
    return seen


def strongly_connected(adjacency: dict[str, list[str]]) -> list[set[str]]:
    """The strongly connected components of a directed graph (Tarjan's
    algorithm without recursion, so that deep graphs do not overflow)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[set[str]] = []
    for root in adjacency:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            peers = adjacency[node]
            if i < len(peers):
                work.append((node, i + 1))
                peer = peers[i]
                if peer not in index:
                    work.append((peer, 0))
                elif peer in on_stack:
                    low[node] = min(low[node], index[peer])
                continue
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                out.append(component)
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return out


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
