"""How often is a proposal that is not better kept, and a better one kept?

The search's proposals are mostly small changes. This takes real ones: each
champion and the seed as a parent, and as its children every knob the
offline proposer turns, halved and doubled (a choice: every other value);
and each move the other way, the moved file as the parent and the original
as its child (tuned parents seldom have better children: the moves back
are where the better ones are).
Every candidate is scored on the bundled corpus's train, val and test
scenarios in its public worlds (reproducible; cached under the project
cache, so a second run takes seconds).

The truth about a child is its paired difference from its parent over the
40 held-out scenarios (val and test): *better* when the mean is above 0
with a paired t over scenarios of at least 2, *not better* when the mean is
at most 0, left out otherwise. Each rule then sees every minibatch GEPA
could draw (every 3 of the 8 train scenarios) and keeps the child or not:

- GEPA's: the minibatch's summed score rises;
- the paired t alone, at several thresholds: the sum rises and the paired t
  over the minibatch's payments reaches the threshold;
- ours (evolve/acceptance.py), at several thresholds: the same, and the
  child rose on more than half of the minibatch's scenarios.

It prints, per rule, the false acceptance rate (the share of minibatches on
which a not-better child is kept, averaged over those children) and the
power (the same over better children).

    python bench/bench_acceptance.py [--workers 2]
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from routesim_evolve.build.gomodule import cache_root
from routesim_evolve.corpus.examples import ScenarioExample, load_examples
from routesim_evolve.evolve.acceptance import ACCEPT_T, paired_t
from routesim_evolve.evolve.registry import acceptance_rule
from routesim_evolve.evolve.rules import AcceptanceRule
from routesim_evolve.propose.tunables import Tunable, find_tunables, set_value
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.score.feedback import ScenarioFeedback

REPO = Path(__file__).resolve().parents[1]
PARENTS = ("cmd/routesim/candidate_impl.go", "planner.go", "probabilistic.go", "skeptic.go",
           "targeted.go")
THRESHOLDS = (1.0, 1.2, 1.5, 2.0, 2.5)
#: The thresholds tried with the majority of scenarios.
MAJORITY_THRESHOLDS = (1.0, 1.2, 1.5)
MINIBATCH = 3
#: A child is better when its mean held-out gain has at least this paired t.
TRUTH_T = 2.0


def parent_sources() -> dict[str, str]:
    out = {}
    for name in PARENTS:
        path = REPO / "go" / name if name.startswith("cmd/") else REPO / "champions" / name
        out["seed" if name.startswith("cmd/") else Path(name).stem] = path.read_text()
    return out


def children(source: str) -> dict[str, str]:
    """Each knob moved once: numbers halved and doubled, choices to every
    other value; moves that change nothing are dropped."""
    out = {}
    for knob in find_tunables(source):
        for label, value in _moves(knob):
            child = set_value(source, knob, value)
            if child != source:
                out[f"{knob.name}{label}"] = child
    return out


def _moves(knob: Tunable) -> list[tuple[str, float | str]]:
    if knob.kind == "choice":
        return [(f"={c}", c) for c in knob.options if c != knob.value]
    value = float(knob.value)
    # Within the knob's bounds, as the offline proposer keeps it.
    return [("x0.5", knob.clamp(value / 2)), ("x2", knob.clamp(value * 2))]


def side_infos(source: str, examples: Sequence[ScenarioExample], evaluator: Evaluator,
               workers: int) -> dict[str, dict[str, Any]]:
    evaluations = evaluator.evaluate_many(source, examples, workers=workers)
    return {e.name: evaluator.side_info(ev, e) for e, ev in zip(examples, evaluations,
                                                                  strict=True)}


def truth(parent: dict[str, dict[str, Any]], child: dict[str, dict[str, Any]],
          held_out: Sequence[str]) -> str:
    diffs = [_score(child[n]) - _score(parent[n]) for n in held_out]
    mean = sum(diffs) / len(diffs)
    if mean <= 0:
        return "not better"
    return "better" if paired_t(diffs) >= TRUTH_T else "unclear"


def _score(info: dict[str, Any]) -> float:
    return ScenarioFeedback.from_side_info(info).score


def acceptance_rates(parent: dict[str, dict[str, Any]], child: dict[str, dict[str, Any]],
                     train: Sequence[str]) -> dict[str, float]:
    """The share of all minibatches on which each rule keeps the child."""
    kept = dict.fromkeys(RULES, 0)
    batches = list(itertools.combinations(train, MINIBATCH))
    for batch in batches:
        before = [parent[n] for n in batch]
        after = [child[n] for n in batch]
        old, new = sum(map(_score, before)), sum(map(_score, after))
        for name, rule in RULES.items():
            kept[name] += rule.keeps(before, after, old, new)
    return {rule: n / len(batches) for rule, n in kept.items()}


#: The rules compared, by the name the table gives them.
RULES: dict[str, AcceptanceRule] = {
    "GEPA (sum rises)": acceptance_rule("sum-rises"),
    **{f"paired t >= {t}": acceptance_rule("paired", threshold=t, majority=False)
       for t in THRESHOLDS},
    **{f"paired t >= {t} and most scenarios risen": acceptance_rule("paired", threshold=t)
       for t in MAJORITY_THRESHOLDS},
}
#: The run's rule, marked in the table.
RUNS_RULE = f"paired t >= {ACCEPT_T} and most scenarios risen"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    train = load_examples(args.corpus, "train")
    held_out = load_examples(args.corpus, "val") + load_examples(args.corpus, "test")
    every = train + held_out
    references = ReferenceResults()
    references.precompute(every, workers=args.workers)
    evaluator = Evaluator(references, cache_dir=cache_root() / "bench-acceptance")
    start = time.monotonic()
    rows: list[tuple[str, str, dict[str, float]]] = []
    for pname, psource in parent_sources().items():
        parent = side_infos(psource, every, evaluator, args.workers)
        for cname, csource in children(psource).items():
            child = side_infos(csource, every, evaluator, args.workers)
            # Both ways: the knob moved, and moved back (a tuned parent's
            # children are seldom better; their parents, as children of
            # theirs, often are).
            for name, old, new in ((f"{pname} -> {cname}", parent, child),
                                   (f"{pname} <- {cname}", child, parent)):
                verdict = truth(old, new, [e.name for e in held_out])
                rates = acceptance_rates(old, new, [e.name for e in train])
                rows.append((name, verdict, rates))
                print(f"  {name}: {verdict}; kept by GEPA on "
                      f"{rates['GEPA (sum rises)']:.0%} of minibatches", file=sys.stderr)
    print(f"{len(rows)} parent-child pairs ({len(rows) // 2} knob moves of {len(PARENTS)} "
          f"parents, each way), {len(every)} scenarios each, "
          f"{time.monotonic() - start:.0f} s")
    _report(rows)
    return 0


def _report(rows: list[tuple[str, str, dict[str, float]]]) -> None:
    classes = {c: [r for r in rows if r[1] == c] for c in ("not better", "better", "unclear")}
    print(", ".join(f"{len(v)} {k}" for k, v in classes.items()))
    print("\n| rule | false acceptance (not better kept) | power (better kept) |")
    print("|---|---:|---:|")
    for rule in rows[0][2]:
        far = _mean([r[2][rule] for r in classes["not better"]])
        power = _mean([r[2][rule] for r in classes["better"]])
        mark = " (the run's)" if rule == RUNS_RULE else ""
        print(f"| {rule}{mark} | {far:.1%} | {power:.1%} |")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


if __name__ == "__main__":
    sys.exit(main())
