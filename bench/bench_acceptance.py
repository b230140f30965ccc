"""How often is a proposal that is not better kept, and a better one kept?

The search's proposals are mostly small changes. This takes real ones: each
champion and the seed as a parent, and every knob the offline proposer
turns on a ladder of values (x0.25, x0.5, the parent's, x2, x4; a choice:
every other value); each step along a ladder is a pair, both ways: the
knob moved one step away from the parent's value, and one step back toward
it (tuned parents seldom have better children: the moves back are where the
better ones are, and a step back from x4 to x2 is smaller than one from x2
to the parent's). A step whose true gain is above +-0.01 is split at its
middle value, up to three times: the knob moved toward its better value in
smaller steps, gains of the sizes the search meets near a champion. And the
champions against each other, both ways (one router's mechanisms for
another's: gains of every size).
Every candidate is scored on the bundled corpus's train, val and test
scenarios in its public worlds and on reseeded copies of them (other draws
of the same scenarios: --held-out-copies of val and test, and the sequential
rule's copies of train, each only when a decision reaches its round;
reproducible, cached under the project cache).

The truth about a child is its paired difference from its parent over the
held-out samples (val and test and their copies, 160 by default): its mean,
the *true gain*, with a 95 % bootstrap interval resampling whole scenarios
(a scenario's copies move together). *Better* when the interval's low end is
above 0, *not better* when the mean is at most 0, left out otherwise. Each
rule then sees every minibatch GEPA could draw (every 3 of the 8 train
scenarios) and keeps the child or not:

- GEPA's: the minibatch's summed score rises;
- the paired t alone, at several thresholds: the sum rises and the paired t
  over the minibatch's payments reaches the threshold;
- the paired rule (evolve/acceptance.py), at several thresholds: the same,
  and the child rose on more than half of the minibatch's scenarios;
- the sequential rule (evolve/sequential.py): the minibatch, then rounds of
  the other train scenarios and reseeded train copies (evolve/evidence.py,
  the order a run draws them in) until its test decides.

It prints, per rule, the false acceptance rate (the share of minibatches on
which a not-better child is kept, averaged over those children) and the
power (the same over better children), each with an exact 95 % interval that
counts each pair as one decision; the power by size of the true gain; the sequential rule's
evaluations per child and their CPU time beside the price of the LM reply
it judges; and one line:

    acceptance: false X.X % [lo, hi] of N not-better pairs; power at >= +0.01
    Y.Y % [lo, hi] of M better pairs; E.E evaluations per child

Every judged pair is kept in a journal as it is judged
(acceptance_journal.py; `--journal`, by default in the project cache) and
read from it by a later invocation under the same inputs, so the whole
measurement, longer than one sitting, can be made in parts (`--parents`
subsets, or a run stopped and started again) and on other machines.

    python bench/bench_acceptance.py [--workers 2] [--held-out-copies 3] [--fine]
                                     [--parents seed,planner,probabilistic,skeptic,targeted]
                                     [--journal FILE] [--fresh]
"""

from __future__ import annotations

import argparse
import inspect
import itertools
import math
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acceptance_journal import (
    Journal,
    JournalMismatch,
    JournalPair,
    JournalStamp,
    settings_text,
    sha256_text,
)
from scipy import stats

from routesim_evolve.build.gomodule import cache_root, module_fingerprint
from routesim_evolve.corpus.examples import ScenarioExample, load_examples, original_name, reseeded
from routesim_evolve.evolve.acceptance import ACCEPT_T
from routesim_evolve.evolve.evidence import TRAIN_COPIES, plan_rounds
from routesim_evolve.evolve.registry import ACCEPTANCE_RULES, DEFAULT_ACCEPTANCE, acceptance_rule
from routesim_evolve.evolve.rules import AcceptanceRule
from routesim_evolve.evolve.sequential import SequentialAcceptance
from routesim_evolve.fsutil import files_fingerprint
from routesim_evolve.propose.tunables import Tunable, find_tunables, set_value
from routesim_evolve.reflect.pricing import bundled_prices
from routesim_evolve.reflect.spec import DEFAULT_MODELS
from routesim_evolve.reflect.usage import Usage
from routesim_evolve.score.axes import SCORING_VERSION
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.score.feedback import ScenarioFeedback
from routesim_evolve.score.resolve import cpu_seconds
from routesim_evolve.score.stats import bootstrap_mean_ci

REPO = Path(__file__).resolve().parents[1]
PARENTS = ("cmd/routesim/candidate_impl.go", "planner.go", "probabilistic.go", "skeptic.go",
           "targeted.go")
THRESHOLDS = (1.0, 1.2, 1.5, 2.0, 2.5)
#: The thresholds tried with the majority of scenarios.
MAJORITY_THRESHOLDS = (1.0, 1.2, 1.5)
MINIBATCH = 3
#: Reseeded copies of each val and test scenario the truth adds.
HELD_OUT_COPIES = 3
#: The true gains the power is asked for (issue 44), and the bins of the curve.
POWER_AT = 0.01
GAIN_BINS = (0.0, 0.003, 0.01, 0.02, 0.03, float("inf"))
#: The LM reply an acceptance decision is weighed against: a proposal
#: prompt and its reply, at the default Anthropic model's price.
REPLY = Usage(input_tokens=30_000, output_tokens=6_000)

Infos = dict[str, dict[str, Any]]
#: Each sample's score, by name.
Scores = dict[str, float]


def parent_sources() -> dict[str, str]:
    out = {}
    for name in PARENTS:
        path = REPO / "go" / name if name.startswith("cmd/") else REPO / "champions" / name
        out["seed" if name.startswith("cmd/") else Path(name).stem] = path.read_text()
    return out


#: The factors a number knob's ladder holds besides the parent's value
#: (x1), and those `--fine` adds.
LADDER = (0.25, 0.5, 2.0, 4.0)
FINE_LADDER = (0.8, 1.25)
#: A step whose true gain is larger than this either way is split at its
#: middle, up to SPLITS times: the knob moved toward its better value in
#: smaller steps, so the pairs' gains spread over the sizes asked about.
SPLIT_ABOVE = 0.01
SPLITS = 3


@dataclass(frozen=True)
class Rung:
    """One value of a knob: the parent's source with it ("" names the
    parent's own value)."""

    name: str
    source: str
    value: float | str


@dataclass(frozen=True)
class Step:
    """Two neighbouring rungs of one knob's ladder, the nearer to the
    parent's value first; `splits` counts the halvings that made it."""

    knob: Tunable
    near: Rung
    far: Rung
    splits: int = 0


def steps(source: str, fine: bool) -> list[Step]:
    """Every step along every knob's ladder, from the parent's value
    outward. A choice's ladder is a star: the parent's value to each other.
    Values the knob's bounds clamp to one rung are that rung once."""
    out = []
    for knob in find_tunables(source):
        own = Rung("", source, knob.value)
        if knob.kind == "choice":
            out += [Step(knob, own, Rung(f"{knob.name}={option}", set_value(source, knob, option),
                                         option))
                    for option in knob.options if option != knob.value]
            continue
        for below in (True, False):
            rungs = [own, *_rungs(knob, source, fine, below)]
            out += [Step(knob, near, far) for near, far in itertools.pairwise(rungs)]
    return out


def _rungs(knob: Tunable, source: str, fine: bool, below: bool) -> list[Rung]:
    """One side of a number knob's ladder, nearest first, within its bounds
    (as the offline proposer keeps it)."""
    factors = sorted((f for f in (*LADDER, *(FINE_LADDER if fine else ())) if (f < 1) == below),
                     key=lambda f: abs(f - 1))
    rungs, seen = [], {source}
    for f in factors:
        value = knob.clamp(float(knob.value) * f)
        child = set_value(source, knob, value)
        if child not in seen:
            seen.add(child)
            rungs.append(Rung(f"{knob.name}x{f:g}", child, value))
    return rungs


def halves(source: str, step: Step) -> list[Step]:
    """A number knob's step split at its middle (geometric, arithmetic
    where a value is not above 0), or none when the middle is one of its
    ends (an integer knob one apart) or the step is a choice's."""
    if step.knob.kind == "choice" or step.splits >= SPLITS:
        return []
    a, b = float(step.near.value), float(step.far.value)
    middle = math.sqrt(a * b) if a > 0 and b > 0 else (a + b) / 2
    child = set_value(source, step.knob, middle)
    if child in (step.near.source, step.far.source):
        return []
    shown = round(middle) if step.knob.is_int else f"{middle:.4g}"
    rung = Rung(f"{step.knob.name}={shown}", child, middle)
    return [Step(step.knob, step.near, rung, step.splits + 1),
            Step(step.knob, rung, step.far, step.splits + 1)]


class Samples:
    """One candidate's scores, sample by sample: the train originals and
    the held-out samples together, when a pair first needs them (every
    minibatch and the truth read them; a pair the journal holds needs
    none), the reseeded train copies only when a sequential decision
    reaches their round (most pairs are decided on the originals)."""

    def __init__(self, source: str, examples: Sequence[ScenarioExample], eager: set[str],
                 evaluator: Evaluator, workers: int) -> None:
        self._source, self._evaluator, self._workers = source, evaluator, workers
        self._examples = {e.name: e for e in examples}
        self._eager = [e.name for e in examples if e.name in eager]
        self.infos: Infos = {}
        self.scores: Scores = {}

    def ready(self) -> Samples:
        """Itself, with the samples every pair reads evaluated."""
        self.ensure(self._eager)
        return self

    def ensure(self, names: Sequence[str]) -> None:
        """Evaluate those of `names` not evaluated yet, in one batch."""
        todo = [self._examples[n] for n in names if n not in self.scores]
        if not todo:
            return
        evaluations = self._evaluator.evaluate_many(self._source, todo, workers=self._workers)
        for example, evaluation in zip(todo, evaluations, strict=True):
            info = self._evaluator.side_info(evaluation, example)
            self.infos[example.name] = info
            self.scores[example.name] = ScenarioFeedback.from_side_info(info).score


@dataclass(frozen=True)
class Truth:
    """A child's true gain over its parent on the held-out samples."""

    gain: float
    low: float
    high: float

    @property
    def verdict(self) -> str:
        if self.gain <= 0:
            return "not better"
        return "better" if self.low > 0 else "unclear"


def truth(parent: Scores, child: Scores, held_out: Sequence[str]) -> Truth:
    diffs = [child[n] - parent[n] for n in held_out]
    gain, low, high = bootstrap_mean_ci(diffs, clusters=[original_name(n) for n in held_out],
                                        resamples=2000)
    return Truth(gain, low, high)


@dataclass
class Judged:
    """What every rule did with one pair over all minibatches."""

    name: str
    truth: Truth
    #: The share of minibatches on which each rule kept the child.
    kept: dict[str, float]
    #: The sequential rule's observations (child evaluations), per minibatch.
    observations: list[int]


def judge(parent: Samples, child: Samples, train: Sequence[str], copies: int,
          held_out: Sequence[str], name: str) -> Judged:
    """Every rule on every minibatch of the pair."""
    parent.ready(), child.ready()
    kept = dict.fromkeys([*RULES, SEQUENTIAL], 0)
    batches = list(itertools.combinations(train, MINIBATCH))
    observations = []
    for batch in batches:
        before = [parent.infos[n] for n in batch]
        after = [child.infos[n] for n in batch]
        old = sum(parent.scores[n] for n in batch)
        new = sum(child.scores[n] for n in batch)
        for rule_name, rule in RULES.items():
            kept[rule_name] += rule.keeps(before, after, old, new)
        decision = SEQUENTIAL_RULE.judge(
            before, after, _rounds(parent, child, train, batch, copies))
        kept[SEQUENTIAL] += decision.kept
        observations.append(decision.observations)
    return Judged(name, truth(parent.scores, child.scores, held_out),
                  {r: n / len(batches) for r, n in kept.items()}, observations)


def _rounds(parent: Samples, child: Samples, train: Sequence[str], batch: Sequence[str],
            copies: int) -> Iterator[list[float]]:
    """The rounds a run would draw after this minibatch, each evaluated (or
    read from the cache) when the test asks for it."""
    for names in plan_rounds(train, batch, copies):
        parent.ensure(names)
        child.ensure(names)
        yield [child.scores[n] - parent.scores[n] for n in names]


#: The minibatch rules compared, by the name the table gives them.
RULES: dict[str, AcceptanceRule] = {
    "GEPA (sum rises)": acceptance_rule("sum-rises"),
    **{f"paired t >= {t}": acceptance_rule("paired", threshold=t, majority=False)
       for t in THRESHOLDS},
    **{f"paired t >= {t} and most scenarios risen": acceptance_rule("paired", threshold=t)
       for t in MAJORITY_THRESHOLDS},
}
#: The sequential rule, with its defaults.
SEQUENTIAL_RULE = SequentialAcceptance()
SEQUENTIAL = (f"sequential (SPRT, gain {SEQUENTIAL_RULE.test.gain:+.2f}, "
              f"alpha {SEQUENTIAL_RULE.test.alpha}, beta {SEQUENTIAL_RULE.test.beta})")
#: The paired rule as a run plays it (`--acceptance paired`), the sequential
#: rule's comparison.
PAIRED = f"paired t >= {ACCEPT_T} and most scenarios risen"
#: The run's default rule (registry.py), marked in the table.
RUNS_RULE = {"sequential": SEQUENTIAL, "paired": PAIRED}.get(DEFAULT_ACCEPTANCE)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--held-out-copies", type=int, default=HELD_OUT_COPIES,
                        help="reseeded copies of each val and test scenario in the truth")
    parser.add_argument("--fine", action="store_true",
                        help="ladders with rungs at x0.8 and x1.25 too: more pairs with "
                        "small gains")
    parser.add_argument("--parents", default=",".join(parent_sources()),
                        help="the parents whose knob moves are played (comma-separated; "
                        "default all): a subset is a smaller, quicker measurement; the "
                        "champions are paired with each other whatever it says")
    parser.add_argument("--journal", type=Path, default=cache_root() / "bench-acceptance"
                        / "journal.jsonl",
                        help="where every judged pair is kept as it is judged, and read "
                        "from instead of judged again (acceptance_journal.py); default in "
                        "the project cache")
    parser.add_argument("--fresh", action="store_true",
                        help="judge every pair anew, emptying the journal first")
    args = parser.parse_args(argv)
    known = parent_sources()
    args.parents = [p for p in args.parents.split(",") if p]
    if unknown := [p for p in args.parents if p not in known]:
        parser.error(f"--parents: no parent {', '.join(unknown)}; they are {', '.join(known)}")
    if args.fresh:
        args.journal.unlink(missing_ok=True)
    try:
        journal = Journal(args.journal, stamp(args))
    except JournalMismatch as exc:
        print(f"bench_acceptance.py: {exc}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-acceptance-") as tmp:
        # The copies' files carry the graph's absolute path: the same
        # content, hence the same cache entries, every run.
        train = reseeded(load_examples(args.corpus, "train"), TRAIN_COPIES, Path(tmp))
        held_out = reseeded(load_examples(args.corpus, "val") + load_examples(args.corpus, "test"),
                            args.held_out_copies, Path(tmp))
        return _run(args, train, held_out, journal)


#: The Python files whose code decides a pair's scores and decisions: a
#: journal written before any of them changed is not mixed with today's.
RULES_CODE = ("evolve/acceptance.py", "evolve/evidence.py", "evolve/rules.py",
              "evolve/sequential.py", "evolve/sum_rises.py", "score/axes.py",
              "score/evaluator.py", "score/feedback.py", "score/stats.py",
              "corpus/examples.py", "propose/tunables.py")
#: This benchmark's own code that walks the ladders and judges a pair.
JUDGING = (steps, _rungs, halves, Samples, Truth, truth, judge, _rounds)


def stamp(args: argparse.Namespace) -> JournalStamp:
    """What this invocation's pairs are judged under (acceptance_journal.py)."""
    package = REPO / "routesim_evolve"
    corpus = sorted(p for folder in ("train", "val", "test", "graphs")
                    for p in (args.corpus / folder).glob("*.json"))
    return JournalStamp(
        scoring_version=SCORING_VERSION,
        simulator=module_fingerprint(include_candidate=False),
        corpus=files_fingerprint(args.corpus, corpus),
        parents={name: sha256_text(source) for name, source in parent_sources().items()},
        rules_code=sha256_text(files_fingerprint(package, [package / f for f in RULES_CODE])
                               + "".join(inspect.getsource(f) for f in JUDGING)),
        settings=settings_text({
            "ladder": LADDER, "fine_ladder": FINE_LADDER if args.fine else (),
            "split_above": SPLIT_ABOVE, "splits": SPLITS, "minibatch": MINIBATCH,
            "held_out_copies": args.held_out_copies, "train_copies": TRAIN_COPIES,
            "sequential": SEQUENTIAL_RULE.test.model_dump(), "rules": sorted(RULES),
            "registry": {name: f"{make.__module__}.{make.__qualname__}"
                         for name, make in ACCEPTANCE_RULES.items()},
        }))


def _run(args: argparse.Namespace, train: list[ScenarioExample],
         held_out: list[ScenarioExample], journal: Journal) -> int:
    every = train + held_out
    references = ReferenceResults()
    evaluator = Evaluator(references, cache_dir=cache_root() / "bench-acceptance")
    originals = [e.name for e in train if original_name(e.name) == e.name]
    eager = {*originals, *(e.name for e in held_out)}
    held_out_names = [e.name for e in held_out]
    read, references_ready = 0, False

    def samples(source: str) -> Samples:
        return Samples(source, every, eager, evaluator, args.workers)

    def judged(name: str, old: Samples, new: Samples) -> Judged:
        """The pair from the journal, or judged now and journaled."""
        nonlocal read, references_ready
        if (kept := journal.pairs.get(name)) is not None:
            read += 1
            return Judged(name, Truth(kept.gain, kept.low, kept.high), dict(kept.kept),
                          list(kept.observations))
        if not references_ready:
            references.precompute(every, workers=args.workers)
            references_ready = True
        j = judge(old, new, originals, TRAIN_COPIES, held_out_names, name)
        journal.record(JournalPair(name=name, gain=j.truth.gain, low=j.truth.low,
                                   high=j.truth.high, kept=j.kept, observations=j.observations))
        _say(j)
        return j

    start = time.monotonic()
    rows: list[Judged] = []
    parents: dict[str, Samples] = {}
    for pname, psource in parent_sources().items():
        parent = parents[pname] = samples(psource)
        if pname not in args.parents:
            continue  # in the pairs between champions below, not its knob moves
        rungs = {psource: parent}
        queue = steps(psource, args.fine)
        while queue:
            step = queue.pop(0)
            for rung in (step.near, step.far):
                if rung.source not in rungs:
                    rungs[rung.source] = samples(rung.source)
            near, far = rungs[step.near.source], rungs[step.far.source]
            # Both ways: a step out, and a step back (a tuned parent's
            # children are seldom better; their parents, as children of
            # theirs, often are).
            label = f"{pname}{'.' + step.near.name if step.near.name else ''}"
            rows += [judged(f"{label} -> {step.far.name}", near, far),
                     judged(f"{label} <- {step.far.name}", far, near)]
            if abs(rows[-1].truth.gain) > SPLIT_ABOVE:
                queue[:0] = halves(psource, step)
    moves = len(rows) // 2
    # One router's mechanisms against another's: the champions paired both
    # ways, gains of every size (all evaluated already). Not the seed, which
    # every champion beats by far more than the gains asked about.
    champions = {k: v for k, v in parents.items() if k != "seed"}
    for (aname, a), (bname, b) in itertools.combinations(champions.items(), 2):
        rows += [judged(f"{aname} -> {bname}", a, b), judged(f"{bname} -> {aname}", b, a)]
    print(f"{len(rows)} parent-child pairs ({moves} steps along the knob ladders of "
          f"{', '.join(args.parents)}, each way, and those routers against each other); "
          f"the truth over {len(held_out)} held-out samples, the sequential rule on up to "
          f"{len(train)} train samples; {read} pairs read from {journal.path}, "
          f"{len(rows) - read} judged in {time.monotonic() - start:.0f} s")
    _report(rows, _cpu_per_evaluation(references, train[:8], args.workers))
    return 0


def _say(j: Judged) -> None:
    """One pair as it is judged (on stderr): its truth and what the paired
    rule and the sequential one kept."""
    print(f"  {j.name}: {j.truth.verdict} {j.truth.gain:+.4f} [{j.truth.low:+.4f}, "
          f"{j.truth.high:+.4f}]; kept on {j.kept[PAIRED]:.0%} of minibatches by the "
          f"paired rule, {j.kept[SEQUENTIAL]:.0%} by the sequential one", file=sys.stderr,
          flush=True)


def _cpu_per_evaluation(references: ReferenceResults, sample: Sequence[ScenarioExample],
                        workers: int) -> float:
    """CPU seconds one scenario evaluation takes (the seed, uncached: the
    simulator's processes included)."""
    fresh = Evaluator(references, cache_dir=None)
    start = cpu_seconds()
    fresh.evaluate_many(parent_sources()["seed"], sample, workers=workers)
    return (cpu_seconds() - start) / len(sample)


def _report(rows: list[Judged], cpu_per_eval: float) -> None:
    classes = {c: [r for r in rows if r.truth.verdict == c]
               for c in ("not better", "better", "unclear")}
    print(", ".join(f"{len(v)} {k}" for k, v in classes.items()))
    print("\n| rule | false acceptance (not better kept) | power (better kept) | "
          f"power at >= {POWER_AT:+.2f} |")
    print("|---|---:|---:|---:|")
    strong = [r for r in classes["better"] if r.truth.gain >= POWER_AT]
    for rule in rows[0].kept:
        mark = " (the run's)" if rule == RUNS_RULE else ""
        print(f"| {rule}{mark} | {_rate(classes['not better'], rule)} | "
              f"{_rate(classes['better'], rule)} | {_rate(strong, rule)} |")
    print(f"\nPower by true gain (better pairs), {SEQUENTIAL} beside {PAIRED}:")
    print("| true gain | pairs | sequential | paired |")
    print("|---|---:|---:|---:|")
    for low, high in itertools.pairwise(GAIN_BINS):
        bin_rows = [r for r in classes["better"] if low <= r.truth.gain < high]
        print(f"| [{low:+.3f}, {high:+.3f}) | {len(bin_rows)} | "
              f"{_rate(bin_rows, SEQUENTIAL)} | {_rate(bin_rows, PAIRED)} |")
    counts = [n for r in rows for n in r.observations]
    mean = sum(counts) / len(counts)
    price = bundled_prices().price(DEFAULT_MODELS["anthropic"])
    reply_usd = price.cost(REPLY) if price else float("nan")
    print(f"\nSequential rule: {mean:.1f} child evaluations per decision on average "
          f"(largest {max(counts)}; its parent's as many more at most, often cached); "
          f"about {cpu_per_eval:.2f} CPU s per evaluation, so {2 * mean * cpu_per_eval:.0f} "
          f"CPU s per decision at most, beside ${reply_usd:.2f} for the LM reply it judges "
          f"({REPLY.input_tokens} input and {REPLY.output_tokens} output tokens at "
          f"{DEFAULT_MODELS['anthropic']}'s price)")
    print(f"acceptance: false {_rate(classes['not better'], SEQUENTIAL, ' ')} of "
          f"{len(classes['not better'])} not-better pairs; power at >= {POWER_AT:+.2f} "
          f"{_rate(strong, SEQUENTIAL, ' ')} of {len(strong)} better pairs; "
          f"{mean:.1f} evaluations per child")


def _interval(rows: Sequence[Judged], rule: str) -> tuple[float, float, float]:
    """The mean share of minibatches kept, with an exact (Clopper-Pearson)
    95 % interval that counts each pair as one decision: the minibatches of
    one pair share most of their evidence (the sequential rule's rounds are
    the same for all of them), so they are not independent trials, and a
    bootstrap over a handful of pairs that all agree gives a point."""
    if not rows:
        return float("nan"), float("nan"), float("nan")
    n = len(rows)
    kept = sum(r.kept[rule] for r in rows)
    low = 0.0 if kept <= 0 else float(stats.beta.ppf(0.025, kept, n - kept + 1))
    high = 1.0 if kept >= n else float(stats.beta.ppf(0.975, kept + 1, n - kept))
    return kept / n, low, high


def _rate(rows: Sequence[Judged], rule: str, space: str = "") -> str:
    """The share kept and its interval, as `12.5% [3.0%, 40.0%]` (with
    `space`, `12.5 % [3.0 %, 40.0 %]`, as the closing line has it)."""
    if not rows:
        return "n/a"
    mean, low, high = _interval(rows, rule)
    return f"{mean:.1%} [{low:.1%}, {high:.1%}]".replace("%", f"{space}%")


if __name__ == "__main__":
    sys.exit(main())
