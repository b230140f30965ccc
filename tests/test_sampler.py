"""Minibatches cover the arenas evenly and never hold a scenario twice,
across epoch boundaries too, and the same seed deals the same stream."""

from __future__ import annotations

import random
from collections import Counter
from types import SimpleNamespace

from gepa.core.data_loader import ListDataLoader

from routesim_evolve.evolve.sampler import ArenaStratifiedSampler


def _loader(per_arena: dict[str, int]) -> ListDataLoader:
    return ListDataLoader([SimpleNamespace(arena=a, name=f"{a}-{k}")
                           for a, n in per_arena.items() for k in range(n)])


def _batches(loader: ListDataLoader, size: int, count: int, seed: int = 0) -> list[list[int]]:
    sampler = ArenaStratifiedSampler(size, random.Random(seed))
    return [sampler.next_minibatch_ids(loader, SimpleNamespace(i=i)) for i in range(count)]


def test_no_minibatch_holds_a_scenario_twice():
    # 8 train scenarios in batches of 3: GEPA's sampler padded the epoch with
    # a repeat; every window here, across epochs too, is distinct.
    loader = _loader({"base": 2, "drift": 2, "atomic_mpp": 2, "attribution": 2})
    for seed in range(20):
        for batch in _batches(loader, 3, 40, seed):
            assert len(set(batch)) == 3, batch


def test_a_minibatch_covers_as_many_arenas_as_it_can():
    loader = _loader({"base": 2, "drift": 2, "atomic_mpp": 2, "attribution": 2})
    arena = {i: loader.items[i].arena for i in range(8)}
    for batch in _batches(loader, 4, 2):  # within the first epoch
        assert len({arena[i] for i in batch}) == 4


def test_every_scenario_is_dealt_as_often_as_another():
    loader = _loader({"base": 3, "drift": 2, "attribution": 1})
    dealt = Counter(i for b in _batches(loader, 2, 30) for i in b)  # 10 epochs of 6
    assert set(dealt.values()) == {10}


def test_the_same_seed_deals_the_same_stream_and_a_small_split_whole():
    loader = _loader({"base": 2, "drift": 1})
    assert _batches(loader, 2, 9, seed=5) == _batches(loader, 2, 9, seed=5)
    assert all(sorted(b) == [0, 1, 2] for b in _batches(loader, 5, 3))
