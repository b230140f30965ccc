"""Simulator speed on a graph of the real network's size, with the seed router.

Prints payments and attempts simulated per second, the share of run time
spent outside the router (goal: under 10%), the time to load the graph, and
the peak memory of the routesim process.

The graph is the real 2021 mainnet graph in ../shared/data where present
(imported into a temporary corpus, never into the repo); else a synthetic
graph of the same size from the corpus generator.

    python bench/bench_sim.py [--payments 100] [--arena base]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REAL_GRAPH = REPO.parent / "shared" / "data" / "ln-listchannels-2021-04-16.json.gz"
MAINNET_NODES = 8800


def make_scenario(workdir: Path, payments: int, arena: str) -> tuple[Path, str]:
    """A one-scenario corpus on a mainnet-size graph; returns the scenario and
    where its graph came from."""
    graph_args = ["--import", str(REAL_GRAPH)] if REAL_GRAPH.is_file() else [
        "--nodes", str(MAINNET_NODES)]
    origin = str(REAL_GRAPH) if REAL_GRAPH.is_file() else f"synthetic, {MAINNET_NODES} nodes"
    corpus = workdir / "corpus"
    subprocess.run(
        [sys.executable, "-m", "routesim_evolve", "corpus", "generate", "--out", str(corpus),
         *graph_args, "--arenas", arena, "--split-sizes", "1,0,0",
         "--payments", f"{payments},{payments}"],
        check=True, cwd=REPO, capture_output=True,
    )
    return next((corpus / "train").glob("*.json")), origin


def build_routesim(workdir: Path) -> Path:
    binary = workdir / "routesim"
    subprocess.run(["go", "build", "-tags", "routesim_nolnd", "-o", str(binary),
                    "./cmd/routesim"], check=True, cwd=REPO / "go")
    return binary


def graph_size(scenario: Path) -> tuple[int, int]:
    data = json.loads(scenario.read_text())
    graph = json.loads((scenario.parent / data["graph"]).read_text())
    return len(graph["nodes"]), len(graph["channels"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--payments", type=int, default=100)
    parser.add_argument("--arena", default="base", choices=["base", "drift"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-sim-") as tmp:
        work = Path(tmp)
        scenario, origin = make_scenario(work, args.payments, args.arena)
        nodes, channels = graph_size(scenario)
        binary = build_routesim(work)
        out = work / "result.json"
        started = time.perf_counter()
        proc = subprocess.Popen([str(binary), "--out", str(out), str(scenario)])
        # wait4 gives this one child's peak RSS (RUSAGE_CHILDREN would
        # include the corpus generator's Python process).
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            sys.exit(f"routesim exited with {proc.returncode}")
        peak_kib = usage.ru_maxrss
        totals = json.loads(out.read_text())["totals"]
    router_s = totals["router_ns"] / 1e9
    sim_s = totals["sim_ns"] / 1e9
    run_s = router_s + sim_s
    print(f"graph: {origin}: {nodes} nodes, {channels} channels; arena {args.arena}")
    print(f"payments: {totals['payments']} ({totals['succeeded']} delivered), "
          f"attempts: {totals['attempts']}")
    print(f"run time (router + simulator): {run_s:.2f} s; graph load and start: "
          f"{wall - run_s:.2f} s; process wall time {wall:.2f} s")
    print(f"payments/s: {totals['payments'] / run_s:.1f}   attempts/s: "
          f"{totals['attempts'] / run_s:.1f}")
    print(f"simulator-only: {totals['payments'] / sim_s:.0f} payments/s, "
          f"{totals['attempts'] / sim_s:.0f} attempts/s")
    print(f"share of run time outside the router: {100 * sim_s / run_s:.2f}% (goal < 10%)")
    print(f"peak memory of routesim (max RSS): {peak_kib / 1024:.0f} MiB")


if __name__ == "__main__":
    main()
