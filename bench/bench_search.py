"""Does the main loop keep what is better, drop what is not, and name the
best? A scripted reflection LM plays through the whole search, once under
each acceptance rule asked (`--rules`: GEPA's, the paired rule,
evolve/acceptance.py, and the run's sequential one, evolve/sequential.py) and seed
(`--seeds`).
Two scripts:

- large: the run starts from a handicapped seed (routes of at most 2 hops)
  and the LM answers each prompt with the next file of a fixed script,
  whatever the parent: a 3-hop seed, the champions, each champion with one
  of its first three numeric knobs halved or doubled, the in-tree seed, and
  exact repeats of two champions (33 files).
- small: the run starts from a good parent, champions/probabilistic.go (the
  realistic case late in a search, where most moves are neutral or worse),
  or with `--start detuned` from that champion with `sizeExponent` halved
  (a parent with small real gains to find: the moves back toward 0.6), or
  with `--start KNOB=VALUE[,KNOB=VALUE...]` from it with those knobs set
  (gains as small as wanted), and the LM answers each prompt with its
  parent with one numeric knob moved (x0.5, x2, x0.8, x1.25, within the
  knob's bounds), cycling through knobs and factors, skipping moves that
  change nothing or repeat a source already proposed; it is played out
  after `--proposals` proposals (24), or sooner when a parent has no fresh
  move (18 from the champion).

The candidates the tables need are then scored on the test split in the
runs' hidden worlds and on `--test-copies` reseeded copies of it (other
draws under the same secret; cached under the project cache): one draw of
32 scenarios detects about +-0.02 between neighbours, the gains of the small
script are smaller. A kept child is a false acceptance when its mean test
score is not above its parent's. It prints one table per script and
rule: proposals kept, false acceptances among them, the named best's test
score beside the best test score of any candidate the search evaluated on
val, and the metric calls spent. For the small script it also lists every
kept child with its mean test difference from its parent (95 % bootstrap
interval over the test samples), the false acceptance rate (the share
kept of the proposals evaluated that were not better on test) and the
share kept of those that were better.

    python bench/bench_search.py [--script large|small|both] [--max-evals 400]
        [--proposals 24] [--rules sum-rises,paired,sequential] [--seeds 1,2,3,4,5]
        [--start champion|detuned|KNOB=VALUE,...] [--test-copies 3]

Hidden worlds under a fixed secret (the same at every invocation); the
intervals are bootstrap intervals that resample whole test scenarios (a
scenario's copies move together).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from routesim_evolve.build.gomodule import cache_root
from routesim_evolve.corpus.examples import ScenarioExample, load_examples, original_name, reseeded
from routesim_evolve.corpus.worlds import WorldSecret, resolve
from routesim_evolve.evolve.acceptance import ACCEPT_T
from routesim_evolve.evolve.driver import evolve
from routesim_evolve.evolve.registry import DEFAULT_ACCEPTANCE, acceptance_rule
from routesim_evolve.evolve.rules import AcceptanceRule
from routesim_evolve.propose.base import Proposer
from routesim_evolve.propose.tunables import find_tunables, set_value
from routesim_evolve.runs.settings import EvolveSettings, RunSummary
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults, candidate_hash
from routesim_evolve.score.feedback import ScenarioFeedback
from routesim_evolve.score.stats import compare_paired

REPO = Path(__file__).resolve().parents[1]
WORLD_SECRET = "5e" * 32
SEED = (REPO / "go" / "cmd" / "routesim" / "candidate_impl.go").read_text()
HANDICAPPED = SEED.replace("maxHops = 20 ", "maxHops = 2 ")
CHAMPION = (REPO / "champions" / "probabilistic.go").read_text()


def detuned(source: str, knob: str = "sizeExponent", factor: float = 0.5) -> str:
    """The champion with one knob moved off its tuned value: a parent with
    real small gains to find (moves back toward the tuned value), where the
    tuned champion has next to none (bench_acceptance.py: none of its knob
    moves is better on the held-out samples)."""
    tunable = next(k for k in find_tunables(source) if k.name == knob)
    return set_value(source, tunable, tunable.clamp(float(tunable.value) * factor))


#: Where the small script starts, by the name --start gives it.
STARTS = {"champion": CHAMPION, "detuned": detuned(CHAMPION)}
#: Reseeded copies of each test scenario the truth adds.
TEST_COPIES = 3


def start_source(spec: str) -> str:
    """The small script's start: a name of STARTS, or the champion with
    knobs set (`KNOB=VALUE,...`, each within its bounds). ValueError names
    what is wrong: an unknown knob (with the knobs there are), a value not
    a number or out of the knob's bounds, an option the choice lacks."""
    if spec in STARTS:
        return STARTS[spec]
    source = CHAMPION
    knobs = {k.name: k for k in find_tunables(CHAMPION)}
    for setting in spec.split(","):
        name, _, value = (part.strip() for part in setting.partition("="))
        knob = knobs.get(name)
        if knob is None:
            raise ValueError(f"{setting!r}: give {', '.join(STARTS)} or KNOB=VALUE pairs; "
                             f"the champion's knobs are {', '.join(knobs)}")
        if knob.kind == "choice":
            if value not in knob.options:
                raise ValueError(f"{setting!r}: {name} is one of {', '.join(knob.options)}")
            source = set_value(source, knob, value)
            continue
        try:
            number = float(value)
        except ValueError:
            raise ValueError(f"{setting!r}: {name} takes a number") from None
        if knob.clamp(number) != number:
            raise ValueError(f"{setting!r}: {name} takes values in [{knob.low}, {knob.high}]")
        source = set_value(source, knob, number)
    return source
#: The knob mover's factors, in the order it cycles through them.
FACTORS = (0.5, 2.0, 0.8, 1.25)


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

    def propose(self, parent: str, feedback: Sequence[ScenarioFeedback]) -> str | None:
        if self.next >= len(self.files):
            return None
        self.next += 1
        return self.files[self.next - 1]

    def exhausted(self) -> str | None:
        return "the script is played out" if self.next >= len(self.files) else None


def knob_moves(source: str) -> list[tuple[str, str]]:
    """(label, moved source) for every numeric knob of the source and every
    factor, factor by factor, each value kept within the knob's bounds."""
    knobs = [k for k in find_tunables(source) if k.kind == "number"]
    return [(f"{k.name} x{f:g}", set_value(source, k, k.clamp(float(k.value) * f)))
            for f in FACTORS for k in knobs]


class KnobMoverLM(Proposer):
    """Answers every prompt with its parent with one numeric knob moved,
    going on from the last move it made, skipping moves that change nothing
    or repeat a source it has seen; played out after `proposals`, or when a
    parent has no move left."""

    name = "knob-mover"

    def __init__(self, proposals: int) -> None:
        self.left = proposals
        self.cursor = 0
        self.seen: set[str] = set()
        #: The move that made each child, by candidate hash.
        self.labels: dict[str, str] = {}

    def propose(self, parent: str, feedback: Sequence[ScenarioFeedback]) -> str | None:
        if self.left <= 0:
            return None
        self.seen.add(parent)
        moves = knob_moves(parent)
        for i in range(len(moves)):
            at = (self.cursor + i) % len(moves)
            label, child = moves[at]
            if child not in self.seen:
                self.cursor, self.left = at + 1, self.left - 1
                self.seen.add(child)
                self.labels[candidate_hash(child)] = label
                return child
        self.left = 0  # a parent with no fresh move ends the script
        return None

    def exhausted(self) -> str | None:
        return "its moves are spent" if self.left <= 0 else None


@dataclass
class Run:
    """One search under one rule, as its log tells it."""

    summary: RunSummary
    events: list[dict[str, Any]]
    run_dir: Path

    @property
    def start(self) -> str:
        """The hash of the candidate the run started from."""
        return next(e["seed"] for e in self.events if e["event"] == "start")


def run(label: str, acceptance: AcceptanceRule, seed_source: str, proposer: Proposer,
        workdir: Path, max_evals: int, rng_seed: int = 1) -> Run:
    seed = workdir / f"{label}-seed.go"
    seed.write_text(seed_source)
    settings = EvolveSettings(corpus=REPO / "corpus", run_dir=workdir / label, seed_file=seed,
                              seed=rng_seed, world_secret=WORLD_SECRET, max_evals=max_evals,
                              adaptive=False)
    summary = evolve(settings, [proposer], say=lambda m: None, acceptance=acceptance)
    events = [json.loads(line) for line in (settings.run_dir / "log.jsonl").open()]
    return Run(summary, events, settings.run_dir)


def judged_pairs(events: list[dict[str, Any]]) -> list[tuple[str, str, bool]]:
    """(parent, child, kept) of every proposal evaluated, by candidate hash."""
    parent, child, out = None, None, []
    for e in events:
        if e["event"] == "parent":
            parent, child = e["parent"], None
        elif e["event"] == "proposal" and e["children"]:
            child = e["children"][0]
        elif e["event"] in ("accepted", "rejected") and parent and child:
            out.append((parent, child, e["event"] == "accepted"))
            child = None
    return out


class HeldOutTruth:
    """Each candidate's scores on the test samples (the test split and its
    reseeded copies, in the runs' hidden worlds), evaluated once."""

    def __init__(self, test: list[ScenarioExample], run_dirs: Sequence[Path]) -> None:
        self.test = test
        #: Each sample's original scenario: the bootstrap resamples these.
        self.clusters = [original_name(e.name) for e in test]
        self.run_dirs = run_dirs
        self.evaluator = Evaluator(ReferenceResults(), cache_dir=cache_root() / "bench-search")
        self.scores: dict[str, list[float]] = {}

    def source(self, h: str) -> str:
        for run_dir in self.run_dirs:
            if (path := run_dir / "candidates" / f"{h}.go").is_file():
                return path.read_text()
        raise KeyError(f"no run holds candidate {h}")

    def of(self, h: str) -> list[float]:
        if h not in self.scores:
            evals = self.evaluator.evaluate_many(self.source(h), self.test, workers=2)
            self.scores[h] = [e.score for e in evals]
        return self.scores[h]

    def mean(self, h: str) -> float:
        return sum(self.of(h)) / len(self.of(h))

    def better(self, parent: str, child: str) -> bool:
        return self.mean(child) > self.mean(parent)


def print_table(runs: dict[str, Run], truth: HeldOutTruth) -> None:
    print("\n| rule | kept | false acceptances | named best, test | named best - its parent, "
          "test | named best - the run's start, test | best evaluated on val, test | "
          "metric calls |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    for label, r in runs.items():
        kept = [(p, c) for p, c, k in judged_pairs(r.events) if k]
        false = [p for p in kept if not truth.better(*p)]
        on_val = {e["candidate"] for e in r.events if e["event"] == "val"}
        best_any = max(truth.mean(h) for h in on_val)
        named = truth.mean(candidate_hash(r.summary.best_path.read_text()))
        print(f"| {label} | {len(kept)} | {len(false)} | {named:.4f} | "
              f"{named_gain(r, truth)} | {named_gain(r, truth, from_start=True)} | "
              f"{best_any:.4f} | {r.summary.metric_calls} |")


def named_gain(r: Run, truth: HeldOutTruth, from_start: bool = False) -> str:
    """The named best's test difference from its parent (or from the
    candidate the run started from), with its interval: a gain only when
    the interval excludes 0."""
    named = candidate_hash(r.summary.best_path.read_text())
    start = r.start
    parent = start if from_start else next(
        (p for p, c, k in judged_pairs(r.events) if k and c == named), None)
    if parent is None or named == start:
        return "the seed is named"
    d = compare_paired("best", "parent", truth.of(named), truth.of(parent),
                       clusters=truth.clusters)
    shown = " (a gain)" if d.ci_low > 0 else ""
    return f"{d.mean_diff:+.4f} [{d.ci_low:+.4f}, {d.ci_high:+.4f}]{shown}"


def print_small_moves(runs: dict[str, Run], labels: dict[str, dict[str, str]],
                      truth: HeldOutTruth) -> None:
    """Every kept child's test difference, the false acceptance rate and
    the share of better children kept."""
    for label, r in runs.items():
        pairs = judged_pairs(r.events)
        worse = [k for p, c, k in pairs if not truth.better(p, c)]
        better = [k for p, c, k in pairs if truth.better(p, c)]
        print(f"\n{label}: {len(pairs)} proposals evaluated; {len(worse)} not better on test, "
              f"{_kept(worse)} (false acceptance rate); {len(better)} better, {_kept(better)}")
        named = candidate_hash(r.summary.best_path.read_text())
        print(f"  named best: {'the seed' if named == r.start else labels[label][named]} "
              f"({named[:8]})")
        for p, c, _ in (x for x in pairs if x[2]):
            d = compare_paired("child", "parent", truth.of(c), truth.of(p),
                               clusters=truth.clusters)
            verdict = "better" if truth.better(p, c) else "FALSE ACCEPTANCE"
            print(f"  kept {labels[label].get(c, c)} ({c[:8]} from {p[:8]}): test "
                  f"{d.mean_diff:+.4f} [{d.ci_low:+.4f}, {d.ci_high:+.4f}] {verdict}")


def _kept(verdicts: list[bool]) -> str:
    share = f"{sum(verdicts) / len(verdicts):.1%}" if verdicts else "n/a"
    return f"{sum(verdicts)} of them kept: {share}"


@dataclass
class Script:
    """What the scripted LM plays: the seed, and a fresh LM per run."""

    name: str
    seed: str
    lm: Callable[[], Proposer]
    about: str


#: The rules the runs compare, by the name --rules gives them, with their labels.
RULES = {
    name: label + (" (the run's)" if name == DEFAULT_ACCEPTANCE else "")
    for name, label in (("sum-rises", "GEPA (sum rises)"),
                        ("paired", f"paired t >= {ACCEPT_T}, most scenarios risen"),
                        ("sequential", "sequential (SPRT on train evidence)"))
}


def test_samples(workdir: Path, copies: int) -> list[ScenarioExample]:
    """The test split in the hidden worlds of the runs' secret and `copies`
    reseeded copies of each, as a run's held-out table plays them
    (evolve/driver.py: its test scenarios as played, reseeded)."""
    hidden = resolve(load_examples(REPO / "corpus", "test"), WorldSecret.parse(WORLD_SECRET),
                     workdir / "test-worlds")
    return reseeded(hidden, copies, workdir / "test-copies")


def play(s: Script, workdir: Path, max_evals: int, rules: Sequence[str] = tuple(RULES),
         seeds: Sequence[int] = (1,), test_copies: int = TEST_COPIES) -> None:
    runs: dict[str, Run] = {}
    labels: dict[str, dict[str, str]] = {}
    for rng_seed in seeds:
        for name in rules:
            label = RULES[name] + (f", seed {rng_seed}" if len(seeds) > 1 else "")
            lm = s.lm()
            runs[label] = run(f"{s.name}-{name}-{rng_seed}", acceptance_rule(name), s.seed, lm,
                              workdir, max_evals, rng_seed)
            labels[label] = getattr(lm, "labels", {})
    test = test_samples(workdir, test_copies)
    truth = HeldOutTruth(test, [r.run_dir for r in runs.values()])
    print(f"\n## {s.name} changes: {s.about}; test: {len(set(truth.clusters))} scenarios "
          f"and {test_copies} reseeded copies of each ({len(test)} samples) in hidden worlds")
    print_table(runs, truth)
    if s.name == "small":
        print_small_moves(runs, labels, truth)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--script", choices=("large", "small", "both"), default="both")
    parser.add_argument("--max-evals", type=int, default=400,
                        help="the budget of each run (400 plays either script whole)")
    parser.add_argument("--proposals", type=int, default=24,
                        help="the knob moves the small script makes")
    parser.add_argument("--rules", default=",".join(RULES),
                        help=f"the acceptance rules compared (of {', '.join(RULES)})")
    parser.add_argument("--start", default="champion",
                        help="where the small script starts: the tuned champion, the "
                        "champion with sizeExponent halved (detuned: small real gains to "
                        "find), or the champion with knobs set (KNOB=VALUE,...)")
    parser.add_argument("--test-copies", type=int, default=TEST_COPIES,
                        help="reseeded copies of each test scenario the truth adds (0: one "
                        "draw of 32 scenarios, which detects about +-0.02)")
    parser.add_argument("--seeds", default="1",
                        help="the runs' seeds (GEPA's sampling), comma-separated: one run per "
                        "seed and rule")
    args = parser.parse_args(argv)
    rules = [r for r in args.rules.split(",") if r]
    if unknown := [r for r in rules if r not in RULES]:
        parser.error(f"--rules: no rule {', '.join(unknown)}; the rules are {', '.join(RULES)}")
    try:
        seeds = [int(x) for x in args.seeds.split(",") if x]
    except ValueError:
        parser.error(f"--seeds: {args.seeds!r} is not a comma-separated list of integers")
    try:
        start = start_source(args.start)
    except ValueError as exc:
        parser.error(f"--start: {exc}")
    if args.test_copies < 0:
        parser.error("--test-copies: give 0 or more")
    files = script()
    scripts = [Script("large", HANDICAPPED, lambda: ScriptedLM(files),
                      f"{len(files)} scripted files from a 2-hop seed"),
               Script("small", start, lambda: KnobMoverLM(args.proposals),
                      f"{args.proposals} knob moves from the current parent, seed "
                      "champions/probabilistic.go" + _start_said(args.start))]
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        for s in scripts:
            if args.script in (s.name, "both"):
                play(s, Path(tmp), args.max_evals, rules, seeds, args.test_copies)
    return 0


def _start_said(spec: str) -> str:
    if spec == "champion":
        return ""
    return " with sizeExponent halved" if spec == "detuned" else f" with {spec}"


if __name__ == "__main__":
    sys.exit(main())
