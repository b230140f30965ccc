"""Scale: 1,000 payments on the real 2021 mainnet graph for every router.

Generates a one-scenario corpus (base arena, 1,000 payments) from the 2021
graph in ../shared/data into a temporary folder (never the repo), then plays
it through the seed router, each champion, lnd-apriori, lnd-bimodal, ldk
(LDK's router in its bridge process: its time per payment includes the
pipe) and the oracle, and prints for each: wall time, router time per
payment, payments delivered and peak RSS (of the run's largest process).
Exits with a message where the data is absent.

Amounts are small (1,000 to 20,000 sat by default): at the corpus's usual
sizes one sender drains its own channels within a few dozen payments, and
the rest would only time refusals.

    python bench/bench_scale.py [--payments 1000] [--arena base]
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

from routesim_evolve.build.cache import default_cache
from routesim_evolve.build.ldk import bridge_binary
from routesim_evolve.evolve.seed import load_seed
from routesim_evolve.simulate.reference import LDK, ORACLE, PRODUCTION_ROUTERS

REPO = Path(__file__).resolve().parents[1]
REAL_GRAPH = REPO.parent / "shared" / "data" / "ln-listchannels-2021-04-16.json.gz"
REFERENCES = (*PRODUCTION_ROUTERS, ORACLE)


def make_scenario(workdir: Path, payments: int, arena: str, amounts: str) -> Path:
    corpus = workdir / "corpus"
    subprocess.run(
        [sys.executable, "-m", "routesim_evolve", "corpus", "generate", "--out", str(corpus),
         "--import", str(REAL_GRAPH), "--arenas", arena, "--split-sizes", "1,0,0",
         "--payments", f"{payments},{payments}", "--amount-sat", amounts],
        check=True, cwd=REPO, capture_output=True,
    )
    return next((corpus / "train").glob("*.json"))


def play(binary: Path, router: str, scenario: Path, out: Path) -> dict[str, float]:
    """One run; its wall time, totals and peak RSS (of this child only)."""
    bridge = ["--ldk-bridge", str(bridge_binary())] if router == LDK else []
    started = time.perf_counter()
    proc = subprocess.Popen([str(binary), "--router", router, *bridge, "--out", str(out),
                             str(scenario)])
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{router}: routesim exited with {os.waitstatus_to_exitcode(status)}")
    totals = json.loads(out.read_text())["totals"]
    return {"wall": wall, "router_s": totals["router_ns"] / 1e9, "payments": totals["payments"],
            "succeeded": totals["succeeded"], "rss_mib": usage.ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--payments", type=int, default=1000)
    parser.add_argument("--arena", default="base")
    parser.add_argument("--amount-sat", default="1000,20000", help="MIN,MAX of the amounts")
    args = parser.parse_args()
    if not REAL_GRAPH.is_file():
        sys.exit(f"real graph absent at {REAL_GRAPH} (see shared/data/README.md): nothing to do")
    cache = default_cache()
    runs: list[tuple[str, Path, str]] = []
    reference = cache.build_module()
    for router in REFERENCES:
        runs.append((router, reference.binary, router))
    for name, path in [("seed", None), *((p.stem, p) for p in sorted(
            (REPO / "champions").glob("*.go")))]:
        built = cache.build(load_seed(path).source)
        if not built.ok or built.binary is None:
            sys.exit(f"{name} does not build: {built.message}")
        runs.append((name, built.binary, "candidate"))
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        scenario = make_scenario(Path(tmp), args.payments, args.arena, args.amount_sat)
        print(f"{args.payments} payments of {args.amount_sat} sat, arena {args.arena}, "
              f"on {REAL_GRAPH.name}")
        print("| router | wall s | router ms/payment | delivered | peak RSS MiB |")
        print("|---|---:|---:|---:|---:|")
        for name, binary, router in runs:
            r = play(binary, router, scenario, Path(tmp) / f"{name}.json")
            print(f"| {name} | {r['wall']:.1f} | {1000 * r['router_s'] / r['payments']:.1f} | "
                  f"{r['succeeded']}/{r['payments']} | {r['rss_mib']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
