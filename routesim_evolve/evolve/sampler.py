"""Minibatches that cover the arenas evenly and never hold a scenario twice.

GEPA accepts a proposal on a few train scenarios (the minibatch), so what a
minibatch holds decides which changes survive. GEPA's own sampler shuffles
the train split and pads each epoch to a whole number of minibatches with
the scenarios drawn least, so a minibatch could hold one scenario twice (its
score counted double) and three scenarios of one arena while another had
none. This one deals the train split as a stream of epochs: each epoch
shuffles the scenarios of every arena and deals them arena by arena in a
shuffled arena order, so a minibatch no larger than the number of arenas
holds one scenario of as many arenas; and where a minibatch spans two
epochs, the new epoch's first scenarios are reordered so that none repeats
one the minibatch already holds.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Hashable, Sequence
from typing import Any

from gepa.strategies.batch_sampler import BatchSampler


class ArenaStratifiedSampler(BatchSampler[Hashable, Any]):
    """GEPA's batch sampler over train scenarios (data instances with an
    `arena`). Its position is `stream` and `position`, which SearchState
    saves; its random generator is the search's."""

    def __init__(self, minibatch_size: int, rng: random.Random) -> None:
        self.minibatch_size = minibatch_size
        self.rng = rng
        self.stream: list[Hashable] = []
        self.position = 0

    def next_minibatch_ids(self, loader: Any, state: Any) -> list[Hashable]:
        ids = list(loader.all_ids())
        if not ids:
            raise ValueError("Cannot sample a minibatch from an empty loader.")
        size = min(self.minibatch_size, len(ids))
        while len(self.stream) - self.position < size:
            pending = self.stream[self.position:]
            self.stream += _apart(self._epoch(loader, ids), pending, size - len(pending))
        batch = self.stream[self.position:self.position + size]
        self.position += size
        # Keep the stream short: what was dealt is not needed again.
        self.stream, self.position = self.stream[self.position:], 0
        return batch

    def _epoch(self, loader: Any, ids: Sequence[Hashable]) -> list[Hashable]:
        """Every scenario once: each arena's shuffled, dealt arena by arena."""
        by_arena: dict[str, list[Hashable]] = defaultdict(list)
        for data_id, example in zip(ids, loader.fetch(list(ids)), strict=True):
            by_arena[str(getattr(example, "arena", ""))].append(data_id)
        arenas = sorted(by_arena)
        self.rng.shuffle(arenas)
        for arena in arenas:
            self.rng.shuffle(by_arena[arena])
        order: list[Hashable] = []
        for k in range(max(len(v) for v in by_arena.values())):
            order += [by_arena[a][k] for a in arenas if k < len(by_arena[a])]
        return order


def _apart(epoch: list[Hashable], pending: Sequence[Hashable], head: int) -> list[Hashable]:
    """The epoch with its first `head` scenarios none of `pending` (the
    minibatch's start, from the epoch before), each swapped with the
    nearest later scenario that is not."""
    out = list(epoch)
    taken = set(pending)
    for i in range(min(head, len(out))):
        if out[i] in taken:
            j = next((j for j in range(head, len(out)) if out[j] not in taken), None)
            if j is not None:
                out[i], out[j] = out[j], out[i]
    return out
