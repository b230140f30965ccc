"""Corpus generation on graphs of a current snapshot's size and sparsity.

Times, on a synthetic graph of 17,324 nodes (about a 2026 mainnet snapshot's
size) with 35 % of its directions' policies removed: building the graph's
reachability once (Reach: strongly connected components and the core's
reach), choosing the senders of 20 scenarios, and the same on the real 2021
graph in ../shared/data with a third of its directions removed (skipped
with a message where the data is absent). Goal: seconds, not minutes.

    python bench/bench_generate.py [--nodes 17324] [--scenarios 20]
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from routesim_evolve.corpus.generate import choose_sender
from routesim_evolve.corpus.graphtools import Reach
from routesim_evolve.corpus.importers import import_graph_file
from routesim_evolve.corpus.schema import Graph
from routesim_evolve.corpus.settings import SenderSettings
from routesim_evolve.corpus.topology import synthetic_graph

REPO = Path(__file__).resolve().parents[1]

REAL_GRAPH = REPO.parent / "shared" / "data" / "ln-listchannels-2021-04-16.json.gz"


def without_policies(graph: Graph, share: float, seed: int) -> Graph:
    """`graph` with `share` of its directions' policies removed."""
    rng = random.Random(seed)
    channels = []
    for c in graph.channels:
        gone = {k: None for k in ("policy1", "policy2") if rng.random() < share}
        channels.append(c.model_copy(update=gone))
    return graph.model_copy(update={"channels": channels})


def measure(label: str, graph: Graph, scenarios: int) -> None:
    started = time.perf_counter()
    reach = Reach(graph)
    built = time.perf_counter() - started
    rng = random.Random(1)
    started = time.perf_counter()
    reached = [len(choose_sender(rng, graph, reach, SenderSettings())[1])
               for _ in range(scenarios)]
    chosen = time.perf_counter() - started
    print(f"{label}: {len(graph.nodes)} nodes, {len(graph.channels)} channels; core "
          f"{len(reach.core)} nodes, core reaches {len(reach.core_reach)}")
    print(f"  reachability once: {built:.2f} s; {scenarios} senders chosen in {chosen:.2f} s "
          f"({1000 * chosen / scenarios:.0f} ms each); each sender reaches "
          f"{min(reached)}–{max(reached)} nodes")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=17_324)
    parser.add_argument("--scenarios", type=int, default=20)
    args = parser.parse_args()
    started = time.perf_counter()
    synthetic = without_policies(synthetic_graph(args.nodes, 11, "bench"), 0.35, 5)
    print(f"synthetic graph made in {time.perf_counter() - started:.1f} s")
    measure("synthetic, 35 % of directions without a policy", synthetic, args.scenarios)
    if not REAL_GRAPH.is_file():
        print(f"real graph absent at {REAL_GRAPH} (see shared/data/README.md): skipped")
        return
    with tempfile.TemporaryDirectory():
        real = import_graph_file(REAL_GRAPH).graph
        measure("real 2021 graph, a third of directions without a policy",
                without_policies(real, 1 / 3, 5), args.scenarios)


if __name__ == "__main__":
    main()
