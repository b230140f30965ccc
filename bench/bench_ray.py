"""The Ray executor against the local pool, on this machine.

Prints, for the seed on every scenario of a split (its binary built once,
from the binary cache), each scenario run `--repeats` times:
- the time to start (or join) Ray;
- one at a time: the mean time of a run on each executor, and the
  difference, Ray's overhead per evaluation (shipping, scheduling, the
  outcome's return);
- all at once (as many threads as the executor has slots): the wall time on
  each, and Ray's speed-up over the local pool.
On one machine Ray cannot beat the local pool (the same cores, more work per
run); its speed-up comes from more machines (docs/ray.md).

    python bench/bench_ray.py [--corpus corpus] [--split val] [--repeats 3]
        [--ray-address HOST:PORT]
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench_common import split_parser


def main() -> None:
    parser = split_parser(__doc__)
    parser.add_argument("--ray-address", help="a running cluster (default: a new local one)")
    args = parser.parse_args()

    from routesim_evolve.build.cache import default_cache
    from routesim_evolve.evolve.seed import in_tree_seed
    from routesim_evolve.simulate.executor import (
        LOCAL,
        ExecutorKind,
        ExecutorSettings,
        open_executor,
    )
    from routesim_evolve.simulate.sandbox import SandboxLimits

    scenarios = sorted((args.corpus / args.split).glob("*.json")) * args.repeats
    source = in_tree_seed().read_text()
    binary = default_cache().build(source).binary
    assert binary is not None, "the seed does not build"
    limits = SandboxLimits()

    started = time.perf_counter()
    settings = ExecutorSettings(kind=ExecutorKind.RAY, ray_address=args.ray_address)
    ray_executor = open_executor(settings, say=print)
    start_s = time.perf_counter() - started
    if ray_executor is LOCAL:
        raise SystemExit("no Ray: nothing to compare")
    # Ship the binary and the scenarios once, as a run does before it counts.
    for scenario in scenarios[: len(scenarios) // args.repeats]:
        ray_executor.run_binary(binary, scenario, limits=limits, source=source)

    def one(executor: object, scenario: Path) -> float:
        t = time.perf_counter()
        outcome = executor.run_binary(binary, scenario, limits=limits, source=source)
        assert outcome.ok, outcome.feedback
        return time.perf_counter() - t

    def all_at_once(executor: object) -> float:
        t = time.perf_counter()
        with ThreadPoolExecutor(max_workers=executor.slots()) as pool:
            list(pool.map(lambda s: one(executor, s), scenarios))
        return time.perf_counter() - t

    local_one = statistics.mean(one(LOCAL, s) for s in scenarios)
    ray_one = statistics.mean(one(ray_executor, s) for s in scenarios)
    local_all = all_at_once(LOCAL)
    ray_all = all_at_once(ray_executor)

    print(f"corpus {args.corpus}, split {args.split}: {len(scenarios)} runs of the seed "
          f"({args.repeats} × {len(scenarios) // args.repeats} scenarios)")
    print(f"Ray start-up: {start_s:.1f} s ({ray_executor.describe()})")
    print(f"one at a time, mean per run: local {local_one * 1000:.0f} ms, Ray "
          f"{ray_one * 1000:.0f} ms: overhead {(ray_one - local_one) * 1000:.0f} ms per evaluation")
    print(f"all at once: local pool ({LOCAL.slots()} threads) {local_all:.2f} s, Ray "
          f"({ray_executor.slots()} slots) {ray_all:.2f} s: speed-up {local_all / ray_all:.2f}×")


if __name__ == "__main__":
    main()
