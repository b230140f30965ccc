"""Does the offline proposer raise the val score of a champion-like candidate
within the default budget?

Starts two offline runs on the bundled corpus, each with the default budget
(20 × |val| evaluations): one from a champion as it is, one from the same
champion with some of its knobs moved away from their tuned values (so there
is something to find). Prints the val score of the seed and of the best
candidate, the knobs that changed, and the held-out test comparison of best
vs seed.

    python bench/bench_offline.py [--champion champions/probabilistic.go]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from routesim_evolve.evolve.driver import evolve
from routesim_evolve.propose.factory import NamedOffline
from routesim_evolve.propose.tunables import find_tunables, set_value
from routesim_evolve.runs.settings import EvolveSettings

REPO = Path(__file__).resolve().parents[1]
# Knob values far from what the champion was tuned to.
DETUNE = {"sizeExponent": 0.2, "targetProb": 0.85, "feeWeight": 1.5, "hopPenalty": 0.3}


def detuned(source: str) -> tuple[str, dict[str, float | str]]:
    changed: dict[str, float | str] = {}
    for knob in find_tunables(source):
        if knob.name in DETUNE:
            source = set_value(source, knob, DETUNE[knob.name])
            changed[knob.name] = DETUNE[knob.name]
    return source, changed


def knob_changes(before: str, after: str) -> list[str]:
    old = {k.name: k.value for k in find_tunables(before)}
    return [f"{k.name}: {old.get(k.name)} → {k.value}" for k in find_tunables(after)
            if old.get(k.name) != k.value]


#: Hidden worlds, as a run plays them, but the same ones at every invocation,
#: so that the figures reproduce (corpus/worlds.py).
WORLD_SECRET = "b0" * 32


def run(label: str, source: str, corpus: Path, workdir: Path, seed: int) -> None:
    seed_file = workdir / f"{label}.go"
    seed_file.write_text(source)
    settings = EvolveSettings(corpus=corpus, run_dir=workdir / label, seed_file=seed_file,
                              seed=seed, world_secret=WORLD_SECRET)
    summary = evolve(settings, [NamedOffline(seed=seed)], say=lambda m: None)
    best = summary.best_path.read_text()
    pair = next(p for p in summary.test.pairs if (p.a, p.b) == ("best", "seed"))
    print(f"{label}: val {summary.seed_val:.4f} → {summary.best_val:.4f} "
          f"({summary.best_val - summary.seed_val:+.4f}) in {summary.metric_calls} evaluations")
    print(f"  knobs changed: {', '.join(knob_changes(source, best)) or 'none'}")
    print(f"  held-out test, best − seed: {pair.mean_diff:+.4f} "
          f"[{pair.ci_low:+.4f}, {pair.ci_high:+.4f}], W/L/T {pair.wins}/{pair.losses}/{pair.ties}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--champion", type=Path, default=REPO / "champions" / "probabilistic.go")
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    champion = args.champion.read_text()
    moved, changed = detuned(champion)
    print(f"champion {args.champion}; detuned copy sets {changed}")
    with tempfile.TemporaryDirectory(prefix="bench-offline-") as tmp:
        run("as-tuned", champion, args.corpus, Path(tmp), args.seed)
        run("detuned", moved, args.corpus, Path(tmp), args.seed)


if __name__ == "__main__":
    main()
