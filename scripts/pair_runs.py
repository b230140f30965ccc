"""How a change moved each router: two `compare --json` files of the same
routers on the same scenarios, one written before the change and one after,
paired per sample and clustered by original scenario as `compare` pairs
routers, per arena and over all arenas.

    python scripts/pair_runs.py BEFORE.json AFTER.json [--arena drift]

Each row is `ROUTER after` against `ROUTER before`; a router or a scenario
in only one of the files is left out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pydantic import ValidationError

from routesim_evolve.report.heldout import render_pairs
from routesim_evolve.score.compare import Comparison, pair_scores


def load(path: Path) -> Comparison:
    """The comparison in path; exits 2 naming the file when it is not one."""
    try:
        return Comparison.model_validate_json(path.read_bytes())
    except (OSError, ValidationError, ValueError) as exc:
        first = str(exc).splitlines()[0]
        print(f"{path}: not a comparison written by `compare --json` ({first})", file=sys.stderr)
        sys.exit(2)


def by_scenario(c: Comparison, router: str, arena: str) -> dict[str, float]:
    return {s.scenario: s.score for s in c.scores
            if s.router == router and arena in ("all", s.arena)}


def paired(before: Comparison, after: Comparison, arena: str) -> Comparison:
    """Every router of both files, after against before, on one arena."""
    routers = [r for r in after.routers if r in before.routers]
    pairs = []
    for r in routers:
        now, then = by_scenario(after, r, arena), by_scenario(before, r, arena)
        if set(now) & set(then):
            pairs.append(pair_scores(f"{r} after", f"{r} before", now, then))
    return Comparison(routers=routers, scores=[], pairs=pairs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--arena", help="one arena (default: each, then all)")
    args = parser.parse_args()
    before, after = load(args.before), load(args.after)
    arenas = [args.arena] if args.arena else [
        *sorted({s.arena for s in after.scores}), "all"]
    for arena in arenas:
        print(f"## {arena}\n\n{render_pairs(paired(before, after, arena))}\n")


if __name__ == "__main__":
    main()
