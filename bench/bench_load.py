"""How long a routesim process spends loading its graph, before any payment.

Every run of every router (a compare runs hundreds) starts by reading,
shape-checking and validating its graph file. This runs the Go benchmark
`BenchmarkLoadGraph` (go/scenario/load_bench_test.go): a synthetic graph of
a 2026 mainnet snapshot's size (15k nodes, 50k channels, both policies
announced, about 23 MB of JSON) loaded with `scenario.LoadGraph`, as the
command loads it. It prints the time per load, the throughput and the
allocations.

    python bench/bench_load.py [--loads 5]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from bench_common import go_bench

LINE = re.compile(r"BenchmarkLoadGraph\S*\s+(\d+)\s+(\d+) ns/op\s+([\d.]+) MB/s\s+"
                  r"(\d+) B/op\s+(\d+) allocs/op")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=5, help="loads timed (after one untimed)")
    args = parser.parse_args(argv)
    out = go_bench("./scenario", "^BenchmarkLoadGraph$", "-trimpath", "-benchtime",
                   f"{args.loads}x", "-benchmem")
    match = LINE.search(out)
    if not match:
        sys.exit(f"no BenchmarkLoadGraph line in Go's output:\n{out}")
    loads, ns, mb_s, bytes_op, allocs = match.groups()
    print(f"graph of 15,000 nodes and 50,000 channels, {loads} loads:")
    print(f"  {int(ns) / 1e6:.0f} ms a load ({float(mb_s):.1f} MB/s)")
    print(f"  {int(bytes_op) / 2**20:.0f} MiB and {int(allocs) / 1e6:.2f} M allocations a load")
    return 0


if __name__ == "__main__":
    sys.exit(main())
