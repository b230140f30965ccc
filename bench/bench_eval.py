"""How long evaluating one new candidate on the whole val split takes.

Prints, for the bundled corpus (or --corpus):
- lnd's reference results for the split, computed from scratch (once per
  scenario in practice: they are cached on disk afterwards);
- cold: a candidate never seen before (its binary must be compiled; the Go
  build cache is warm), all val scenarios in parallel;
- warm: the same candidate again (binary cached, every scenario re-run);
- the parallel batch evaluator's speed-up over one worker.
The project's goal is under 15 s warm on a 2-core machine.

    python bench/bench_eval.py [--corpus corpus] [--split val] [--repeats 3]
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_common import split_parser


def main() -> None:
    parser = split_parser(__doc__)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-eval-") as cache:
        # A private cache dir: the binary and reference caches start empty.
        os.environ["ROUTESIM_CACHE_DIR"] = cache
        run(args.corpus, args.split, args.repeats)


def run(corpus: Path, split: str, repeats: int) -> None:
    from routesim_evolve.corpus.examples import load_examples
    from routesim_evolve.evolve.seed import in_tree_seed
    from routesim_evolve.score.evaluator import Evaluator, ReferenceResults

    examples = load_examples(corpus, split)
    cores = os.cpu_count() or 1
    references = ReferenceResults()
    started = time.perf_counter()
    references.precompute(examples, workers=cores)
    ref_s = time.perf_counter() - started
    evaluator = Evaluator(references)  # no evaluation cache: every run is real
    seed = in_tree_seed().read_text()

    cold, warm = [], []
    for k in range(repeats):
        # A new constant makes a new candidate: its binary is not cached.
        source = seed.replace("maxHops = 20", f"maxHops = {21 + k}")
        cold.append(_timed(lambda s=source: evaluator.evaluate_many(s, examples, workers=cores)))
        warm.append(_timed(lambda s=source: evaluator.evaluate_many(s, examples, workers=cores)))
    one = _timed(lambda: evaluator.evaluate_many(source, examples, workers=1))
    par = _timed(lambda: evaluator.evaluate_many(source, examples, workers=cores))

    print(f"corpus {corpus}, split {split}: {len(examples)} scenarios; {cores} cores")
    print(f"lnd references from scratch (2 routers, built once): {ref_s:.1f} s")
    print(f"cold (compile + run), median of {repeats}: {statistics.median(cold):.2f} s "
          f"(min {min(cold):.2f}, max {max(cold):.2f})")
    print(f"warm (cached binary), median of {repeats}: {statistics.median(warm):.2f} s "
          f"(min {min(warm):.2f}, max {max(warm):.2f})  goal < 15 s")
    print(f"one worker: {one:.2f} s; {cores} workers: {par:.2f} s; speed-up {one / par:.2f}×")


def _timed(f: Callable[[], object]) -> float:
    started = time.perf_counter()
    f()
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
