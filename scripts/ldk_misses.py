"""Why LDK missed the payments another reference router delivered: the
fairness evidence of docs/ldk-reference.md.

For every scenario of a split, every payment `--against` (lnd-apriori by
default) delivered and ldk did not is put in one class:

- "no route at first, receiver one-sided": LDK found no route before any
  attempt, and every channel of the receiver that the other router could
  enter it by lacks the receiver's own update. LDK routes only over channels
  with both directions' updates (`ChannelInfo::as_directed_to`); lnd needs
  only the direction it uses.
- "no route at first, two-sided graph too thin": LDK found no route before
  any attempt, and the channels LDK can use (both updates present, the
  direction enabled, or the sender's own) carry less than the amount from
  sender to receiver at their full capacities: a max flow that ignores
  balances, fees, time locks and the per-HTLC maximum, so an upper bound on
  what LDK's router could find.
- "no route at first, other": LDK found no route before any attempt, for
  another reason.
- "gave up after a failure next to the receiver": LDK's first failed
  attempt failed at the node before the receiver (on the receiver's
  channel), which LDK then leaves out of the payment's retries; lnd, which
  applies the failure's channel_update, retries through it.
- "gave up after other failures": the rest.

    python scripts/ldk_misses.py --corpus corpus --split test [--against lnd-apriori]

The results come from the reference cache (run once where missing), as
eval and compare use them. Channels are read from the scenario's graph file
(before the scenario's stale gossip).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.corpus.load import scenario_graph_file
from routesim_evolve.simulate.reference import LDK, ReferenceCache
from routesim_evolve.simulate.result_format import PaymentResult


def receiver_one_sided(graph: dict, target: str) -> bool:
    """Whether every channel by which a router could enter `target` (the
    other end's update present and enabled) lacks `target`'s own update."""
    usable = []
    for ch in graph["channels"]:
        if target not in (ch["node1"], ch["node2"]):
            continue
        inbound, own = (ch["policy1"], ch["policy2"]) if ch["node2"] == target else (
            ch["policy2"], ch["policy1"])
        if inbound is not None and not inbound.get("disabled", False):
            usable.append(own is not None)
    return bool(usable) and not any(usable)


def two_sided_max_flow(graph: dict, source: str, target: str, need: int) -> int:
    """The max flow (msat, up to `need`) from source to target over the
    channels LDK can use, each direction at the channel's capacity: both
    updates present and the direction enabled (the sender's own always)."""
    cap: dict[tuple[str, str], int] = {}
    for ch in graph["channels"]:
        p1, p2 = ch["policy1"], ch["policy2"]
        a, b, total = ch["node1"], ch["node2"], ch["capacity_sat"] * 1000
        if p1 is None or p2 is None:
            continue
        for (u, v), pol in (((a, b), p1), ((b, a), p2)):
            if not pol.get("disabled", False) or u == source:
                cap[(u, v)] = cap.get((u, v), 0) + total
    return _max_flow(cap, source, target, need)


def _max_flow(cap: dict[tuple[str, str], int], s: str, t: str, need: int) -> int:
    """Edmonds-Karp on a residual map, stopping once `need` is reached."""
    residual = dict(cap)
    adjacent: dict[str, set[str]] = {}
    for u, v in cap:
        adjacent.setdefault(u, set()).add(v)
        adjacent.setdefault(v, set()).add(u)
        residual.setdefault((v, u), 0)
    flow = 0
    while flow < need:
        parent = {s: s}
        queue = [s]
        for u in queue:
            for v in sorted(adjacent.get(u, ())):
                if v not in parent and residual[(u, v)] > 0:
                    parent[v] = u
                    queue.append(v)
            if t in parent:
                break
        if t not in parent:
            return flow
        path, v = [], t
        while v != s:
            path.append((parent[v], v))
            v = parent[v]
        push = min(need - flow, *(residual[e] for e in path))
        for u, v in path:
            residual[(u, v)] -= push
            residual[(v, u)] += push
        flow += push
    return flow


def classify(p: PaymentResult, graph: dict, source: str, target: str) -> str:
    if p.attempts == 0:
        if receiver_one_sided(graph, target):
            return "no route at first, receiver one-sided"
        if two_sided_max_flow(graph, source, target, p.amount_msat) < p.amount_msat:
            return "no route at first, two-sided graph too thin"
        return "no route at first, other"
    first = next((a for a in p.attempt_log if a.fail_idx >= 0), None)
    if first is not None and first.fail_idx == first.hops - 1:
        return "gave up after a failure next to the receiver"
    return "gave up after other failures"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--split", default="test")
    parser.add_argument("--against", default="lnd-apriori")
    args = parser.parse_args()
    cache = ReferenceCache()
    classes: Counter[str] = Counter()
    delivered = {LDK: 0, args.against: 0}
    payments = 0
    for ex in load_examples(args.corpus, args.split):
        ldk, other = cache.result(ex.path, LDK), cache.result(ex.path, args.against)
        scenario = json.loads(Path(ex.path).read_text())
        graph = json.loads(Path(scenario_graph_file(Path(ex.path))).read_text())
        targets = [p["target"] for p in scenario["payments"]]
        payments += len(ldk.payments)
        delivered[LDK] += ldk.totals.succeeded
        delivered[args.against] += other.totals.succeeded
        for mine, theirs in zip(ldk.payments, other.payments, strict=True):
            if theirs.success and not mine.success:
                classes[classify(mine, graph, scenario["source"], targets[mine.index])] += 1
    print(f"{args.corpus}/{args.split}: {payments} payments; ldk delivered {delivered[LDK]}, "
          f"{args.against} {delivered[args.against]}")
    print(f"\n| payments {args.against} delivered and ldk did not | count |\n|---|---:|")
    for name, count in classes.most_common():
        print(f"| {name} | {count} |")
    print(f"| all | {sum(classes.values())} |")


if __name__ == "__main__":
    main()
