"""A researcher's compare on a real-size graph: how long, and where it goes.

Generates N scenarios per arena from the real 2021 mainnet graph in
../shared/data (8,827 nodes, 37,454 channels), or with --nodes from a
synthetic graph of that many nodes that the corpus generator calibrates to
the real network's degrees and capacities (15000: a 2026 snapshot's size),
into a temporary folder (never the repo), then runs the project's own compare (score/compare.py, as
`python -m routesim_evolve compare` runs it) of the seed and the four
champions beside lnd-apriori, lnd-bimodal, ldk and the oracle: 9 routers. It
prints, per router, its time per payment in the router (the results'
router_ns) and in the simulator (sim_ns), and for the whole compare the wall
time split into generating the corpus, building the binaries (lnd's
reference binary and each candidate) and running every router (references
and candidates share one pool); what is neither router nor simulator inside those runs
(process start, loading and parsing the graph, the determinism double runs,
scoring) is the rest. Then the compare's sanity check, and the two goals of
issue 31:

1. every reference router's time per payment within 2x of the fastest
   champion's;
2. 60 scenarios x every router in under 15 minutes on 2 cores (projected
   from this run's per-scenario wall time; run it with --nodes 15000 for a
   2026 snapshot's size).

    python bench/bench_realscale.py [--nodes 15000] [--per-arena 3] [--payments 20]
                                    [--workers 2]

Without --nodes it exits with a message where the real graph is absent.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from routesim_evolve.build.cache import default_cache
from routesim_evolve.build.ldk import bridge_binary
from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.evolve.seed import load_seed
from routesim_evolve.report.heldout import render_sanity
from routesim_evolve.score.compare import compare_routers
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.simulate.reference import LDK, ORACLE, PRODUCTION_ROUTERS, ReferenceCache
from routesim_evolve.simulate.result_format import Result
from routesim_evolve.simulate.sandbox import DEFAULT_LIMITS

REPO = Path(__file__).resolve().parents[1]
REAL_GRAPH = REPO.parent / "shared" / "data" / "ln-listchannels-2021-04-16.json.gz"
GOAL_RATIO = 2.0
GOAL_SCENARIOS, GOAL_MINUTES = 60, 15.0


def generate(out: Path, graph: list[str], per_arena: int, payments: int, arenas: str) -> float:
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "routesim_evolve", "corpus", "generate", "--out", str(out),
         *graph, "--arenas", arenas, "--split-sizes", f"0,0,{per_arena}",
         "--payments", f"{payments},{payments}", "--amount-sat", "10000,500000"],
        check=True, cwd=REPO, capture_output=True,
    )
    return time.monotonic() - started


def candidates() -> dict[str, str]:
    out = {"seed": load_seed(None).source}
    for path in sorted((REPO / "champions").glob("*.go")):
        out[path.stem] = path.read_text()
    return out


def build_all(sources: dict[str, str]) -> float:
    """Build lnd's reference binary, LDK's bridge and every candidate (cached
    ones in no time)."""
    started = time.monotonic()
    cache = default_cache()
    cache.build_module()
    bridge_binary()
    for name, source in sources.items():
        if not cache.build(source).ok:
            sys.exit(f"{name} does not build")
    return time.monotonic() - started


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--per-arena", type=int, default=3)
    parser.add_argument("--payments", type=int, default=20)
    parser.add_argument("--arenas", default="base,atomic_mpp")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--nodes", type=int,
                        help="a synthetic calibrated graph of this many nodes, not the real one")
    args = parser.parse_args(argv)
    if args.nodes:
        graph, graph_name = ["--nodes", str(args.nodes)], f"a synthetic {args.nodes}-node graph"
    elif REAL_GRAPH.is_file():
        graph, graph_name = ["--import", str(REAL_GRAPH)], REAL_GRAPH.name
    else:
        sys.exit(f"real graph absent at {REAL_GRAPH} (see shared/data/README.md): give "
                 "--nodes 15000 for a synthetic one")
    sources = candidates()
    with tempfile.TemporaryDirectory(prefix="bench-realscale-") as tmp:
        corpus = Path(tmp) / "corpus"
        phases = {"generate the corpus": generate(corpus, graph, args.per_arena, args.payments,
                                                  args.arenas)}
        phases["build the binaries"] = build_all(sources)
        examples = load_examples(corpus, "test")
        references = ReferenceResults(ReferenceCache(root=Path(tmp) / "refs"))
        evaluator = Evaluator(references, cache_dir=Path(tmp) / "evals",
                              limits=DEFAULT_LIMITS.but(timeout_s=1800))
        started = time.monotonic()
        comparison = compare_routers(
            sources, examples, evaluator, references, workers=args.workers)
        phases["run every router (one pool)"] = time.monotonic() - started
        # The compare's runs are untimed (--no-timing, for the determinism
        # check): every router runs each scenario once more, alone, timed.
        results = timed_runs(sources, examples, Path(tmp) / "timed")
    _report(args, graph_name, examples, results, phases)
    print("\n" + render_sanity(comparison))
    return 0


def timed_runs(sources: dict[str, str], examples, out: Path) -> list[tuple[str, float, Result]]:
    """(router, wall seconds, result) of a timed run of every router on
    every scenario, one at a time."""
    cache = default_cache()
    binaries = {r: (cache.build_module().binary, r) for r in (*PRODUCTION_ROUTERS, ORACLE)}
    binaries |= {name: (cache.build(src).binary, "candidate") for name, src in sources.items()}
    out.mkdir(parents=True)
    runs = []
    for name, (binary, router) in binaries.items():
        bridge = ["--ldk-bridge", str(bridge_binary())] if router == LDK else []
        for ex in examples:
            path = out / f"{name}-{ex.name}.json"
            started = time.monotonic()
            subprocess.run([str(binary), "--router", router, *bridge, "--out", str(path),
                            str(ex.path)], check=True, capture_output=True, timeout=3600)
            runs.append((name, time.monotonic() - started,
                         Result.model_validate_json(path.read_bytes())))
    return runs


def _report(args, graph_name: str, examples, results: list[tuple[str, float, Result]],
            phases) -> None:
    total = sum(phases.values())
    payments = sum(len(r.payments) for name, _, r in results if name == ORACLE)
    print(f"{len(examples)} scenarios ({args.arenas}, {args.payments} payments each) on "
          f"{graph_name}, {len({r for r, _, _ in results})} routers, {args.workers} "
          f"workers: {total:.0f} s in all")
    print("\n| phase | s | share |\n|---|---:|---:|")
    for phase, s in phases.items():
        print(f"| {phase} | {s:.1f} | {s / total:.0%} |")
    per_router: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0])
    for router, wall, res in results:
        row = per_router[router]
        row[0] += res.totals.router_ns / 1e6
        row[1] += res.totals.sim_ns / 1e6
        row[2] += wall * 1000
        row[3] += len(res.payments)
    print("\nTimed runs, one at a time: inside the router, in the simulator, and the rest of "
          "each process (start, loading and parsing the graph, writing the result).")
    print("\n| router | router ms/payment | simulator ms/payment | rest ms/run |\n"
          "|---|---:|---:|---:|")
    runs_each = len(examples)
    for router, (router_ms, sim_ms, wall_ms, n) in per_router.items():
        rest = (wall_ms - router_ms - sim_ms) / runs_each
        print(f"| {router} | {router_ms / max(n, 1):.2f} | {sim_ms / max(n, 1):.2f} | "
              f"{rest:.0f} |")
    per_payment = {r: row[0] / max(row[3], 1) for r, row in per_router.items()}
    champions = [r for r in per_router if r not in (*PRODUCTION_ROUTERS, ORACLE, "seed")]
    fastest = min(champions, key=per_payment.__getitem__)
    slowest = max((*PRODUCTION_ROUTERS, ORACLE), key=per_payment.__getitem__)
    ratio = per_payment[slowest] / per_payment[fastest]
    print(f"\nGoal 1, reference routers within {GOAL_RATIO:.0f}x of the fastest champion per "
          f"payment: the slowest, {slowest}, is {ratio:.2f}x {fastest}'s -> "
          f"{'met' if ratio <= GOAL_RATIO else 'NOT met'}")
    runs = phases["run every router (one pool)"]
    projected = runs / len(examples) * GOAL_SCENARIOS / 60 + phases["build the binaries"] / 60
    print(f"Goal 2, {GOAL_SCENARIOS} scenarios x {len(per_router)} routers under "
          f"{GOAL_MINUTES:.0f} min: "
          f"projected {projected:.1f} min on this graph ({payments // len(examples)} payments "
          f"a scenario) -> {'met' if projected <= GOAL_MINUTES else 'NOT met'}")


if __name__ == "__main__":
    sys.exit(main())
