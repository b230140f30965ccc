"""How often a minibatch holds one train scenario twice, with GEPA's own
epoch sampler and with ours (routesim_evolve/evolve/sampler.py), and how
many arenas a minibatch covers.

    python bench/bench_sampler.py [--corpus corpus] [--minibatch 3] [--seeds 20] [--iterations 40]

Deals the corpus's train split into minibatches as a run does (the run's
default minibatch of 3), over several seeds, and prints per sampler the
minibatches with a repeated scenario and the mean number of arenas in one.
"""

from __future__ import annotations

import argparse
import random
from types import SimpleNamespace

from gepa.core.data_loader import ListDataLoader
from gepa.strategies.batch_sampler import EpochShuffledBatchSampler

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.evolve.sampler import ArenaStratifiedSampler


def deal(sampler: object, loader: ListDataLoader, iterations: int) -> list[list[int]]:
    return [sampler.next_minibatch_ids(loader, SimpleNamespace(i=i))  # type: ignore[attr-defined]
            for i in range(iterations)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", default="corpus")
    parser.add_argument("--minibatch", type=int, default=3)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--iterations", type=int, default=40)
    args = parser.parse_args()
    train = load_examples(args.corpus, "train")
    loader = ListDataLoader(train)
    print(f"{args.corpus}/train: {len(train)} scenarios; minibatches of {args.minibatch}, "
          f"{args.iterations} iterations × {args.seeds} seeds")
    for name, make in (("GEPA's epoch sampler", EpochShuffledBatchSampler),
                       ("ours (arena by arena)", ArenaStratifiedSampler)):
        batches = [b for seed in range(args.seeds)
                   for b in deal(make(args.minibatch, rng=random.Random(seed)), loader,
                                 args.iterations)]
        repeats = sum(len(set(b)) < len(b) for b in batches)
        arenas = sum(len({train[i].arena for i in b}) for b in batches) / len(batches)
        print(f"{name}: {repeats} of {len(batches)} minibatches hold a scenario twice; "
              f"{arenas:.2f} arenas in one on average")


if __name__ == "__main__":
    main()
