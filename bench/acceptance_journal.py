"""The acceptance benchmark's journal: every judged pair, kept as it is judged.

All of bench_acceptance.py takes longer than one sitting (about 290
evaluations per ladder rung that the sequential rule plays to its cap,
some two hours of two cores for every parent), and its evaluation cache
lives in the project cache, which a fresh machine lacks. So each judged
pair is appended to a journal (JSON lines) the moment it is judged, and a
later invocation with the same journal reads the pairs it holds instead of
evaluating them again: a run stopped at any point, or on another machine,
goes on where it stopped, and `--parents` subsets add up to the whole.

A journal holds only pairs judged under one set of inputs, written down in
its first line (the stamp): the scoring version, the simulator's module
fingerprint, the corpus, the parents' sources, the ladder and the rules'
code and settings. A journal whose stamp differs from today's is refused,
naming what changed, rather than mixed with new pairs: its truths and
decisions were measured on another simulator or rule.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError


class JournalStamp(BaseModel):
    """What a journal's pairs were judged under; equal stamps, comparable pairs."""

    #: A stamp with fields this code does not know is another version's.
    model_config = ConfigDict(frozen=True, extra="forbid")

    scoring_version: int
    #: sha256 of the Go module's build inputs (the candidate's file left out).
    simulator: str
    #: sha256 over the corpus's scenario and graph files.
    corpus: str
    #: sha256 of each parent's source, by parent name.
    parents: dict[str, str]
    #: sha256 of the Python code that decides scores and decisions: the
    #: package's files and the benchmark's own functions that judge a pair.
    rules_code: str
    #: The ladder, the splits, the copies, the minibatch and the rules'
    #: settings, each as the benchmark names it.
    settings: dict[str, str]

    def differences(self, other: JournalStamp) -> list[str]:
        """The fields in which `other` differs from this stamp, named."""
        out = [name for name in ("scoring_version", "simulator", "corpus", "rules_code")
               if getattr(self, name) != getattr(other, name)]
        out += [f"parent {p}" for p in sorted(set(self.parents) | set(other.parents))
                if self.parents.get(p) != other.parents.get(p)]
        out += [f"setting {s}" for s in sorted(set(self.settings) | set(other.settings))
                if self.settings.get(s) != other.settings.get(s)]
        return out


class JournalPair(BaseModel):
    """One judged pair: its truth and what every rule did with it."""

    model_config = ConfigDict(frozen=True)

    name: str
    gain: float
    low: float
    high: float
    #: The share of minibatches on which each rule kept the child.
    kept: dict[str, float]
    #: The sequential rule's child evaluations, minibatch by minibatch.
    observations: list[int]


class JournalMismatch(Exception):
    """The journal was written under other inputs than today's."""


class Journal:
    """The pairs judged so far under one stamp, appended to as they come."""

    def __init__(self, path: Path, stamp: JournalStamp) -> None:
        self.path = path
        self.pairs: dict[str, JournalPair] = {}
        if path.is_file() and path.stat().st_size:
            self._read(stamp)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._append(stamp.model_dump_json())

    def _read(self, stamp: JournalStamp) -> None:
        lines = self.path.read_text().splitlines(keepends=True)
        try:
            kept = JournalStamp.model_validate_json(lines[0])
        except ValidationError as exc:
            first = exc.errors()[0]
            raise JournalMismatch(
                f"{self.path}: line 1 is not a journal stamp ({first['msg']} at "
                f"{'.'.join(map(str, first['loc']))}); give another --journal, or --fresh "
                "to start this one anew") from None
        if changed := kept.differences(stamp):
            raise JournalMismatch(
                f"{self.path}: its pairs were judged under other inputs ({', '.join(changed)} "
                "changed since): they cannot be mixed with today's. Give --fresh to judge "
                "every pair anew, or another --journal.")
        for number, line in enumerate(lines[1:], start=2):
            try:
                pair = JournalPair.model_validate_json(line)
            except ValidationError:
                if number < len(lines):
                    raise JournalMismatch(f"{self.path}: line {number} is not a judged pair; "
                                          "give --fresh to start anew") from None
                # A line cut short by a stop: dropped, so the next pair
                # starts a line of its own, and judged again.
                with self.path.open("r+") as f:
                    f.truncate(len("".join(lines[:-1]).encode()))
                break
            self.pairs[pair.name] = pair

    def record(self, pair: JournalPair) -> None:
        """Keep one judged pair, on disk before this returns."""
        self.pairs[pair.name] = pair
        self._append(pair.model_dump_json())

    def _append(self, line: str) -> None:
        with self.path.open("a") as f:
            f.write(line + "\n")
            f.flush()
            os.fsync(f.fileno())


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def settings_text(settings: Mapping[str, object]) -> dict[str, str]:
    """Settings as the stamp keeps them: each value in its JSON text."""
    return {k: json.dumps(v, sort_keys=True, default=str) for k, v in settings.items()}
