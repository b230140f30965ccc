"""Does handing candidates lnd's graphdb.DirectedChannel cost link time?

Builds the candidate binary (-tags routesim_nolnd, as the sandbox does) with a
changed candidate, once as it is and once with the candidate also importing
lnd's graph/db package (what passing graphdb.DirectedChannel to candidates
would force), and prints the median build times and binary sizes. This is the
measurement behind go/routing mirroring lnd's field names in its own types.

    python bench/bench_graphdb_link.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

GO = Path(__file__).resolve().parents[1] / "go"
CANDIDATE = GO / "cmd" / "routesim" / "candidate_impl.go"
GRAPHDB_IMPORT = '\nimport graphdb "github.com/lightningnetwork/lnd/graph/db"\n'
GRAPHDB_USE = "\nvar _ graphdb.DirectedChannel\n"


def build(work: Path, source: str, out: Path) -> float:
    cand = work / "candidate_impl.go"
    cand.write_text(source)
    overlay = work / "overlay.json"
    overlay.write_text(json.dumps({"Replace": {str(CANDIDATE): str(cand)}}))
    started = time.perf_counter()
    subprocess.run(["go", "build", "-tags", "routesim_nolnd", "-trimpath", "-ldflags=-s -w",
                    "-overlay", str(overlay), "-o", str(out), "./cmd/routesim"],
                   cwd=GO, check=True)
    return time.perf_counter() - started


def with_graphdb(source: str, on: bool) -> str:
    """source, optionally importing and using lnd's graph/db."""
    if not on:
        return source
    head, _, rest = source.partition("package main\n")
    return head + "package main\n" + GRAPHDB_IMPORT + rest + GRAPHDB_USE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    seed = CANDIDATE.read_text()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        variants = {"own types (as shipped)": False, "importing lnd graph/db": True}
        for name, on in variants.items():
            # Warm the Go build cache for this variant's dependencies first.
            build(work, with_graphdb(seed, on), work / "warm")
            times = []
            for k in range(args.runs):
                src = with_graphdb(seed, on) + f"\nvar benchNonce{k} = {time.time_ns()}\n"
                times.append(build(work, src, work / "bin"))
            size = (work / "bin").stat().st_size / 2**20
            print(f"{name:26s} build median {statistics.median(times):.2f} s "
                  f"(min {min(times):.2f}, max {max(times):.2f}), binary {size:.1f} MiB")


if __name__ == "__main__":
    main()
