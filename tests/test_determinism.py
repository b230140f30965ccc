"""A router whose two runs on one scenario differ is caught and scored 0
everywhere; a deterministic one runs twice once, then once per scenario."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from repo_files import SEED_PATH

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.simulate.run_candidate import run_candidate

SEED = SEED_PATH.read_text()

# The seed, made to depend on map iteration order: it walks a map of its
# candidate shard sizes and keeps the first one met.
MAP_ORDER = SEED.replace(
    "func (r *seedRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) "
    "(*route.Route, error) {",
    "func (r *seedRouter) RequestRoute(amt lnwire.MilliSatoshi, inFlight uint32) "
    "(*route.Route, error) {\n"
    "\tfor k := range map[lnwire.MilliSatoshi]bool{amt: true, amt / 2: true, amt / 3: true, "
    "amt / 4: true, amt / 5: true, amt / 6: true, amt / 7: true, amt / 8: true} {\n"
    "\t\tamt = max(k, 1)\n\t\tbreak\n\t}",
    1,
)


class Counting:
    def __init__(self) -> None:
        self.runs = 0
        self._lock = threading.Lock()

    def __call__(self, source: str, path: Path):
        with self._lock:
            self.runs += 1
        return run_candidate(source, path, timeout=60)


def test_a_map_order_router_scores_zero_with_the_causes(tiny_corpus: Path, tmp_path: Path):
    assert MAP_ORDER != SEED
    examples = [e for s in ("train", "val", "test")
                for e in load_examples(tiny_corpus, s)]
    evaluator = Evaluator(ReferenceResults(), cache_dir=tmp_path / "evals")
    evals = [evaluator.evaluate(MAP_ORDER, e) for e in examples]
    caught = [ev for ev in evals if ev.status == "nondeterministic"]
    assert caught, "map iteration order went unnoticed on every scenario"
    assert all(ev.score == 0 for ev in caught)
    assert "iterating over a map" in caught[0].feedback and "first differs" in caught[0].feedback
    # Once caught, every later scenario of the candidate scores 0 too.
    first = evals.index(caught[0])
    assert all(ev.status == "nondeterministic" for ev in evals[first:])


def test_a_deterministic_router_runs_twice_once_per_arena(tiny_corpus: Path, tmp_path: Path):
    val = load_examples(tiny_corpus, "val")
    runner = Counting()
    evaluator = Evaluator(ReferenceResults(), cache_dir=tmp_path / "evals", runner=runner,
                          recheck_share=0.0)
    evals = evaluator.evaluate_many(SEED, val, workers=2)
    assert all(ev.status == "ok" for ev in evals)
    assert runner.runs == len(val) + len({e.arena for e in val})
    # The verdict is kept with the cache: a new evaluator does not re-judge.
    again = Counting()
    other = next(e for e in load_examples(tiny_corpus, "train")
                 if e.arena == val[0].arena)
    Evaluator(ReferenceResults(), cache_dir=tmp_path / "evals", runner=again,
              recheck_share=0.0).evaluate(SEED, other)
    assert again.runs == 1


class Flaky:
    """Runs the seed, but the second run of one scenario gives a result that
    differs (a router nondeterministic only there)."""

    def __init__(self, where: Path) -> None:
        self.where, self.seen, self.runs = where.resolve(), set(), 0

    def __call__(self, source: str, path: Path):
        self.runs += 1
        outcome = run_candidate(source, path, timeout=60)
        here = Path(path).resolve()
        if here == self.where and here in self.seen and outcome.result is not None:
            return outcome.model_copy(update={"result_sha256": "differs"})
        self.seen.add(here)
        return outcome


def test_a_router_nondeterministic_after_the_checked_scenario_is_caught(
    tiny_corpus: Path, tmp_path: Path
):
    val = load_examples(tiny_corpus, "val")
    arena = val[0].arena
    later = next(e for e in load_examples(tiny_corpus, "train") if e.arena == arena)
    for share, caught in ((0.0, False), (1.0, True)):
        flaky = Flaky(later.path)
        evaluator = Evaluator(ReferenceResults(), cache_dir=tmp_path / f"evals{share}",
                              runner=flaky, recheck_share=share)
        first = evaluator.evaluate(SEED, val[0])  # the arena's checked scenario
        assert first.status == "ok"
        ev = evaluator.evaluate(SEED, later)
        assert (ev.status == "nondeterministic") is caught, ev.status
    # The secret decides: the same scenario is picked, or not, at random
    # across processes, and about the share of them.
    from routesim_evolve.score.determinism import DeterminismCheck
    picks = [DeterminismCheck(None, recheck_share=0.2).picked("c", "s") for _ in range(400)]
    assert 40 < sum(picks) < 130


def test_a_cached_evaluation_of_another_simulator_is_run_again(
        tiny_corpus: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The evaluation cache is keyed by the simulator too: after go/ changes
    (here: its fingerprint), a cached score is not served but run again."""
    import routesim_evolve.score.evaluator as evaluator_module

    example = load_examples(tiny_corpus, "val")[0]
    runner = Counting()
    evaluator = Evaluator(ReferenceResults(), cache_dir=tmp_path / "evals", runner=runner,
                          recheck_share=0.0)
    first = evaluator.evaluate(SEED, example)
    evaluator.evaluate(SEED, example)
    runs = runner.runs
    assert first.simulator and runs >= 1
    monkeypatch.setattr(evaluator_module, "module_fingerprint",
                        lambda *a, **k: "0" * 64)
    again = evaluator.evaluate(SEED, example)
    assert runner.runs == runs + 1 and again.simulator == "0" * 64
