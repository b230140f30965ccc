"""What a killed run needs, beyond GEPA's own state, to go on exactly as an
uninterrupted run with the same seed would.

GEPA saves its state (candidates, scores, iteration) at the start of every
iteration, but not its random generator, nor its batch sampler's epoch, nor
our proposers' memory. `SearchState` owns the generator, the sampler and the
candidate selector it hands GEPA, and at each of GEPA's saves writes them,
with the dispatcher's and every proposer's snapshot, to `resume.pkl` in the
run dir (atomically). A resumed run loads it before the first iteration, so
it picks the same parents and minibatches and the offline proposer makes the
same moves; the evaluation cache answers every pair already run.

A run dir is also stamped with the scoring version it was begun under
(`runs/stamp.py`).

What cannot be restored: a language model's reply (the same prompt may get
another answer) and an agent's edits. With an LM in the rotation a resumed
run repeats no evaluation but may propose other candidates from the crash on.
"""

from __future__ import annotations

import logging
import pickle
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gepa.strategies.candidate_selector import ParetoCandidateSelector

from routesim_evolve.evolve.rotation import RotatingProposer
from routesim_evolve.evolve.sampler import ArenaStratifiedSampler
from routesim_evolve.fsutil import atomic_write
from routesim_evolve.reflect.cost import CostLedger

log = logging.getLogger(__name__)

FILE = "resume.pkl"
#: Sampler fields that make up its position (its rng is saved once, shared).
_SAMPLER_FIELDS = ("stream", "position")


class SearchState:
    """GEPA's random search state and our proposers', saved with GEPA's."""

    def __init__(self, run_dir: Path, *, seed: int, minibatch: int,
                 dispatcher: RotatingProposer, ledger: CostLedger) -> None:
        self.path = run_dir / FILE
        self.rng = random.Random(seed)
        self.sampler = ArenaStratifiedSampler(minibatch_size=minibatch, rng=self.rng)
        self.selector = ParetoCandidateSelector(rng=self.rng)
        self.dispatcher = dispatcher
        self.ledger = ledger

    def restore(self) -> bool:
        """Load the last snapshot, if any; True when one was loaded."""
        if not self.path.is_file():
            return False
        try:
            snap = pickle.loads(self.path.read_bytes())
            self.rng.setstate(snap["rng"])
            for name in _SAMPLER_FIELDS:
                setattr(self.sampler, name, snap["sampler"][name])
            self.dispatcher.restore(snap["dispatcher"])
            # Older snapshots (before cost tracking) have no ledger.
            if "ledger" in snap:
                self.ledger.restore(snap["ledger"])
        except (OSError, pickle.UnpicklingError, EOFError, KeyError, TypeError,
                ValueError) as exc:
            log.warning("%s is unreadable (%s): the search state starts afresh", self.path, exc)
            return False
        return True

    # GEPACallback hook ----------------------------------------------------

    def on_state_saved(self, event: Mapping[str, Any]) -> None:
        snap = {
            "rng": self.rng.getstate(),
            "sampler": {name: getattr(self.sampler, name) for name in _SAMPLER_FIELDS},
            "dispatcher": self.dispatcher.snapshot(),
            "ledger": self.ledger.snapshot(),
        }
        atomic_write(self.path, pickle.dumps(snap))
