"""Is the oracle a ceiling on a corpus? Plays every scenario of every split
through the oracle, lnd-apriori, lnd-bimodal and the seed router, prints
each split's mean success per router and every scenario where some router
delivers more than the oracle (docs/oracle.md explains those).

    python scripts/oracle_check.py [--corpus corpus]
"""

from __future__ import annotations

import argparse
import json
import subprocess
from collections import defaultdict
from pathlib import Path

from routesim_evolve.build.cache import default_cache
from routesim_evolve.corpus.schema import SPLITS

REPO = Path(__file__).resolve().parents[1]
ROUTERS = ("oracle", "lnd-apriori", "lnd-bimodal", "candidate")  # candidate: the seed


def success(binary: Path, router: str, scenario: Path) -> float:
    out = subprocess.run([str(binary), "--router", router, "--no-timing", str(scenario)],
                         capture_output=True, text=True, check=True).stdout
    return float(json.loads(out)["totals"]["success_rate"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    args = parser.parse_args()
    binary = default_cache().build_module().binary
    assert binary is not None
    beaten = []
    for split in SPLITS:
        means: dict[str, list[float]] = defaultdict(list)
        for scenario in sorted((args.corpus / split).glob("*.json")):
            rates = {r: success(binary, r, scenario) for r in ROUTERS}
            for r, rate in rates.items():
                means[r].append(rate)
            if max(rates.values()) > rates["oracle"]:
                beaten.append((scenario.relative_to(args.corpus), rates))
        if means:
            print(split, "  ".join(f"{r} {sum(v) / len(v):.3f}" for r, v in means.items()))
    print(f"scenarios where a router delivers more than the oracle: {len(beaten)}")
    for scenario, rates in beaten:
        print(f"  {scenario}: " + ", ".join(f"{r} {v:.3f}" for r, v in rates.items()))


if __name__ == "__main__":
    main()
