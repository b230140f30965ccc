"""Slow first-run work says it is alive; warm runs stay quiet."""

from __future__ import annotations

import time
from pathlib import Path

from routesim_evolve.build.heartbeat import heartbeat
from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.score.evaluator import ReferenceResults


def test_slow_work_beats_and_quick_work_says_nothing() -> None:
    said: list[str] = []
    with heartbeat(said.append, "compiling", first_s=0.05, every_s=0.05):
        time.sleep(0.3)
    assert len(said) >= 3 and all(s.startswith("compiling: ") and s.endswith(" s so far")
                                  for s in said)
    quiet: list[str] = []
    with heartbeat(quiet.append, "compiling", first_s=5.0):
        pass
    assert quiet == []


class _Cache:
    """A reference cache that holds some results and counts builds."""

    def __init__(self, held: bool) -> None:
        self.held, self.builds = held, 0

    def cached(self, scenario: Path, router: str) -> bool:
        return self.held

    def binary(self) -> Path:
        self.builds += 1
        time.sleep(0.1)
        return Path("/nonexistent")

    def result(self, scenario: Path, router: str) -> object:
        return object()


def test_the_reference_binary_is_built_first_only_when_a_result_is_missing(
    tiny_corpus: Path, monkeypatch
) -> None:
    examples = load_examples(tiny_corpus, "val")
    for held in (True, False):
        cache = _Cache(held)
        said: list[str] = []
        monkeypatch.setattr("routesim_evolve.score.evaluator.heartbeat",
                            lambda say, what: heartbeat(say, what, first_s=0.01, every_s=0.05))
        ReferenceResults(cache).precompute(examples, workers=1, say=said.append)  # type: ignore[arg-type]
        assert cache.builds == (0 if held else 1)
        building = [s for s in said if s.startswith("building the reference binary")]
        assert bool(building) == (not held), said
