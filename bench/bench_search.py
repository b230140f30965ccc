"""Does the main loop keep what is better, drop what is not, and name the
best? A scripted reflection LM replays a fixed sequence of real candidate
files through the whole search, once under GEPA's acceptance rule and once
under the run's (evolve/acceptance.py).

The run starts from a handicapped seed (routes of at most 2 hops). The
scripted LM answers each prompt with the next file of the script, whatever
the parent: an exact repeat of the seed, the champions, each champion with
a knob halved or doubled, the in-tree seed, and exact repeats of earlier
files. Every file of the script is then scored on the test split: a kept
child is a false acceptance when its mean test score is not above its
parent's. It prints, per rule: proposals kept, false acceptances among
them, the named best's test score beside the best test score of any
candidate the search evaluated on val, and the metric calls spent.

    python bench/bench_search.py [--max-evals 400]

Hidden worlds under a fixed secret (the same at every invocation).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.corpus.worlds import played_examples
from routesim_evolve.evolve.acceptance import ACCEPT_T, PairedAcceptance
from routesim_evolve.evolve.driver import evolve
from routesim_evolve.propose.base import Proposer
from routesim_evolve.propose.tunables import find_tunables, set_value
from routesim_evolve.runs.settings import EvolveSettings
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults, candidate_hash

REPO = Path(__file__).resolve().parents[1]
WORLD_SECRET = "5e" * 32
SEED = (REPO / "go" / "cmd" / "routesim" / "candidate_impl.go").read_text()
HANDICAPPED = SEED.replace("maxHops = 20 ", "maxHops = 2 ")


def script() -> list[str]:
    """The files the scripted LM answers with, in order."""
    champions = [(REPO / "champions" / f"{n}.go").read_text()
                 for n in ("probabilistic", "planner", "skeptic", "targeted")]
    files = [HANDICAPPED, SEED.replace("maxHops = 20 ", "maxHops = 3 ")]
    for champion in champions:
        files.append(champion)
        for knob in find_tunables(champion)[:3]:
            if knob.kind == "number":
                files += [set_value(champion, knob, float(knob.value) / 2),
                          set_value(champion, knob, float(knob.value) * 2)]
    files += [SEED, champions[0], champions[1]]
    return files


class ScriptedLM(Proposer):
    """Answers every prompt with the next file of a fixed script."""

    name = "scripted"

    def __init__(self, files: Sequence[str]) -> None:
        self.files = list(files)
        self.next = 0

    def propose(self, parent, feedback):
        if self.next >= len(self.files):
            return None
        self.next += 1
        return self.files[self.next - 1]

    def exhausted(self) -> str | None:
        return "the script is played out" if self.next >= len(self.files) else None


def run(label: str, acceptance: PairedAcceptance, files: list[str], workdir: Path,
        max_evals: int) -> dict:
    seed = workdir / "handicapped.go"
    seed.write_text(HANDICAPPED)
    settings = EvolveSettings(corpus=REPO / "corpus", run_dir=workdir / label, seed_file=seed,
                              seed=1, world_secret=WORLD_SECRET, max_evals=max_evals,
                              adaptive=False)
    summary = evolve(settings, [ScriptedLM(files)], say=lambda m: None, acceptance=acceptance)
    events = [json.loads(line) for line in (settings.run_dir / "log.jsonl").open()]
    return {"summary": summary, "events": events, "run_dir": settings.run_dir}


def kept_pairs(events: list[dict]) -> list[tuple[str, str]]:
    """(parent, child) of every kept proposal, by candidate hash."""
    parent, child, pairs = None, None, []
    for e in events:
        if e["event"] == "parent":
            parent = e["parent"]
        elif e["event"] == "proposal" and e["children"]:
            child = e["children"][0]
        elif e["event"] == "accepted" and parent and child:
            pairs.append((parent, child))
    return pairs


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--max-evals", type=int, default=400,
                        help="the budget of each run (400 plays the whole script)")
    args = parser.parse_args(argv)
    files = script()
    by_hash = {candidate_hash(f): f for f in [HANDICAPPED, *files]}
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        workdir = Path(tmp)
        rules = {"GEPA (sum rises)": PairedAcceptance(threshold=-float("inf")),
                 f"paired t >= {ACCEPT_T} (the run's)": PairedAcceptance()}
        runs = {label: run(f"r{i}", rule, files, workdir, args.max_evals)
                for i, (label, rule) in enumerate(rules.items())}
        first = next(iter(runs.values()))
        test = played_examples(first["run_dir"], "test") or load_examples(REPO / "corpus", "test")
        evaluator = Evaluator(ReferenceResults(), cache_dir=workdir / "truth")
        test_mean: dict[str, float] = {}

        def mean_on_test(h: str) -> float:
            if h not in test_mean:
                evals = evaluator.evaluate_many(by_hash[h], test, workers=2)
                test_mean[h] = sum(e.score for e in evals) / len(evals)
            return test_mean[h]

        print(f"{len(files)} scripted files, {len(test)} test scenarios in hidden worlds")
        print("\n| rule | kept | false acceptances | named best, test | best evaluated on "
              "val, test | metric calls |")
        print("|---|---:|---:|---:|---:|---:|")
        for label, r in runs.items():
            pairs = kept_pairs(r["events"])
            false = [p for p in pairs if mean_on_test(p[1]) <= mean_on_test(p[0])]
            on_val = {e["candidate"] for e in r["events"] if e["event"] == "val"}
            best_any = max(mean_on_test(h) for h in on_val)
            named = mean_on_test(candidate_hash(r["summary"].best_path.read_text()))
            print(f"| {label} | {len(pairs)} | {len(false)} | {named:.4f} | {best_any:.4f} | "
                  f"{r['summary'].metric_calls} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

