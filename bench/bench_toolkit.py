"""Speed of the candidates' toolkit (go/routekit) on the real 2021 mainnet graph.

    python bench/bench_toolkit.py [--benchtime 20x] [--count 3]

Runs the toolkit's Go benchmarks (`go test -bench`) on the graph in
../shared/data: a 0.5 BTC payment from a node of middling size (rank 200 by
total capacity) to the largest node it has no channel with. It prints, per
benchmark, the median time per operation over --count runs: backward
Dijkstra under the champions' cost for a 0.01 and a 0.04 BTC shard (most
2021 channels forward at most 2^32 msat per HTLC), the
max flow under the sure bounds, the min-cost flow of the whole 0.5 BTC
(−ln P linearised in 5 pieces plus fees, at most 16 parts), and the worlds
drawn to decide whether a payment is worth starting (LikelyFeasible at
StartProb 0.2, and at 1, which draws all 40 unless one fails). Goal: the
min-cost flow under 100 ms on 2 cores. Exits with a message where the data
is absent.
"""

from __future__ import annotations

import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import click
from bench_common import go_bench

REAL_GRAPH = Path(__file__).resolve().parents[2] / "shared" / "data" / (
    "ln-listchannels-2021-04-16.json.gz")
GOAL_MCF_MS = 100.0
LINE = re.compile(r"^(Benchmark\S+?)(?:-\d+)?\s+\d+\s+([\d.]+) ns/op(.*)$")


@click.command()
@click.option("--benchtime", default="20x", show_default=True, help="go test -benchtime")
@click.option("--count", default=3, show_default=True, help="runs of each benchmark")
def main(benchtime: str, count: int) -> None:
    """Print the toolkit's benchmark figures."""
    if not REAL_GRAPH.is_file():
        sys.exit(f"{REAL_GRAPH} is absent: the toolkit benchmarks need the 2021 graph")
    out = go_bench("./routekit", ".", "-benchtime", benchtime, "-count", str(count))
    times: dict[str, list[float]] = defaultdict(list)
    extras: dict[str, str] = {}
    for line in out.splitlines():
        if m := LINE.match(line.strip()):
            times[m.group(1)].append(float(m.group(2)) / 1e6)
            extras[m.group(1)] = " ".join(m.group(3).split())
    for name, ms in times.items():
        print(f"{name:<40} median {statistics.median(ms):8.2f} ms/op  {extras[name]}")
    mcf = times.get("BenchmarkMinCostFlow")
    if mcf:
        verdict = "meets" if statistics.median(mcf) < GOAL_MCF_MS else "misses"
        print(f"min-cost flow of 0.5 BTC {verdict} the goal of {GOAL_MCF_MS:g} ms")


if __name__ == "__main__":
    main()
