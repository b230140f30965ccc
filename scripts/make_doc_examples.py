"""Write the small example graph and scenarios of docs/examples/.

These files are the shared fixtures of the scenario format: the Go and the
Python tests both read them. They are made by this script (not by the corpus
generator) so that they stay fixed while the generator evolves.

    python scripts/make_doc_examples.py
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "docs" / "examples"
NODES = 40
HUBS = 4


def node_id(i: int) -> str:
    return "02" + hashlib.sha256(f"example-node-{i}".encode()).hexdigest()


def policy(rng: random.Random) -> dict:
    return {
        "fee_base_msat": rng.choice([1000, 1000, 0]),
        "fee_rate_ppm": rng.choice([1, 10, 50, 100, 200, 500]),
        "cltv_delta": rng.choice([40, 80, 144, 34]),
        "htlc_min_msat": 1000,
    }


def edges(rng: random.Random) -> list[tuple[int, int]]:
    """Hubs fully meshed; node 4 (the sender) opens to every hub; the rest
    attach to one to three earlier nodes, mostly hubs."""
    out = [(i, j) for i in range(HUBS) for j in range(i + 1, HUBS)]
    out += [(4, h) for h in range(HUBS)]
    for i in range(5, NODES):
        targets: set[int] = set()
        for _ in range(rng.choice([1, 2, 2, 3])):
            t = rng.randrange(HUBS) if rng.random() < 0.6 else rng.randrange(i)
            if t != i:
                targets.add(t)
        out += [(i, t) for t in sorted(targets)]
    return out


def graph(rng: random.Random) -> dict:
    channels = []
    for n, (a, b) in enumerate(edges(rng)):
        cap = int(min(16_000_000, max(100_000, rng.lognormvariate(14.1, 1.0))))
        p1, p2 = policy(rng), policy(rng)
        if rng.random() < 0.5:
            p1["htlc_max_msat"] = cap * 1000 // 2
        channels.append({
            "scid": f"{700000 + n}x{n % 7}x{n % 2}",
            "node1": node_id(a), "node2": node_id(b), "capacity_sat": cap,
            "policy1": p1, "policy2": p2,
        })
    nodes = [{"id": node_id(i), "alias": f"n{i}"} for i in range(NODES)]
    return {"format": "routesim-graph/1", "nodes": nodes, "channels": channels}


def scenario(rng: random.Random, name: str, arena: str, **overrides: object) -> dict:
    targets = [node_id(i) for i in range(5, NODES)]
    payments = [
        {"target": rng.choice(targets),
         "amount_msat": rng.choice([10_000, 50_000, 200_000, 600_000]) * 1000}
        for _ in range(12)
    ]
    sc = {
        "format": "routesim-scenario/1", "name": name, "arena": arena, "seed": 11,
        "graph": "graph-small.json", "source": node_id(4), "block_height": 800000,
        "start_time": "2026-01-01T00:00:00Z",
        "liquidity": {"bimodal_scale_sat": 300000, "uniform_share": 0.2},
        "gossip": {"stale_share": 0.05, "stale_fee_rate_factor": 2.0,
                   "stale_base_fee_add_msat": 1000, "stale_cltv_add": 40},
        "clock": {"payment_interval_s": 600, "attempt_latency_s": 2},
        "traffic": {"events_per_hour": 0, "median_shift_sat": 50000},
        "atomic_mpp": False,
        "attribution": {"stripped_rate": 0, "shift_before_rate": 0, "shift_after_rate": 0},
        "defaults": {"max_parts": 16, "max_attempts": 40, "fee_limit_ppm": 10000,
                     "fee_limit_base_msat": 10000, "final_cltv_delta": 40,
                     "cltv_limit_delta": 2016},
        "payments": payments,
    }
    sc.update(overrides)
    return sc


def main() -> None:
    rng = random.Random(7)
    OUT.mkdir(parents=True, exist_ok=True)
    files = {"graph-small.json": graph(rng)}
    files["base-example.json"] = scenario(rng, "base-example", "base")
    files["drift-example.json"] = scenario(
        rng, "drift-example", "drift",
        traffic={"events_per_hour": 600, "median_shift_sat": 100000})
    files["atomic-example.json"] = scenario(rng, "atomic-example", "atomic_mpp", atomic_mpp=True)
    files["attribution-example.json"] = scenario(
        rng, "attribution-example", "attribution",
        attribution={"stripped_rate": 0.1, "shift_before_rate": 0.05, "shift_after_rate": 0.05})
    for name, body in files.items():
        (OUT / name).write_text(json.dumps(body, indent=1) + "\n")
        print(f"wrote {OUT / name}")


if __name__ == "__main__":
    main()
