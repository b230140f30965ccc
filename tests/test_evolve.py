"""The evolution driver end to end on a tiny corpus, offline: it reports,
its val scores are val scores, and a resumed run repeats no evaluation."""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from pathlib import Path

from routesim_evolve.corpus.examples import load_examples, original_name
from routesim_evolve.corpus.worlds import played_examples
from routesim_evolve.evolve.driver import evolve
from routesim_evolve.propose.offline import OfflineProposer
from routesim_evolve.runs.settings import EvolveSettings
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.simulate.run_candidate import run_candidate


class CountingRunner:
    """run_candidate, counting which (candidate, scenario) pairs really ran."""

    def __init__(self) -> None:
        self.pairs: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, source: str, path: Path):
        with self._lock:
            self.pairs.append((hashlib.sha256(source.encode()).hexdigest(), str(path)))
        return run_candidate(source, path, timeout=60)


class Named(OfflineProposer):
    name = "offline"


def _settings(corpus: Path, run_dir: Path, budget: int) -> EvolveSettings:
    return EvolveSettings(corpus=corpus, run_dir=run_dir, max_evals=budget, max_concurrency=2)


def test_evolve_reports_and_resumes_without_repeating(tiny_corpus: Path, tmp_path: Path):
    run_dir = tmp_path / "run"
    first = CountingRunner()
    summary = evolve(_settings(tiny_corpus, run_dir, 12), [Named(seed=1)], say=lambda m: None,
                     runner=first)
    for name in ("best.go", "report.md", "report.json", "log.jsonl", "settings.json"):
        assert (run_dir / name).is_file(), name
    assert "package main" in summary.best_path.read_text()
    routers = {s.router for s in summary.test.scores}
    assert routers == {"best", "seed", "lnd-apriori", "lnd-bimodal", "ldk", "oracle"}
    assert "| best | lnd-apriori |" in (run_dir / "report.md").read_text()
    # Each pair runs once, but for the determinism check: every candidate
    # runs at least one of its pairs in each arena a second time (the first,
    # and any the secret picks).
    # A reseeded draw of the held-out test (score/resolve.py) or of train
    # (the sequential acceptance's evidence) is named after its scenario
    # ("test-base-001~r1"): its arena is the original's.
    def arena(path: str) -> str:
        stem = original_name(Path(path).stem)
        return stem.removeprefix("test-").removeprefix("train-").rsplit("-", 1)[0]

    runs = Counter(first.pairs)
    assert max(runs.values()) <= 2, "an evaluation ran 3 times"
    repeated = [(cand, arena(path)) for (cand, path), n in runs.items() if n == 2]
    assert set(repeated) == {(cand, arena(path)) for cand, path in runs}
    # The budget is a limit: the search ran at most 12 pairs (the held-out
    # test split comes on top of it).
    assert summary.metric_calls <= 12
    test_pairs = len(load_examples(tiny_corpus, "test")) * 2
    assert len(set(first.pairs)) <= 12 + test_pairs

    # The best val score is the mean of the best candidate's val scores,
    # not of its train scores (GEPA 0.1.4's cache would mix them up), in
    # the worlds the run played (corpus/worlds.py).
    val, train = played_examples(run_dir, "val"), played_examples(run_dir, "train")
    assert val and train and val != load_examples(tiny_corpus, "val")
    evaluator = Evaluator(ReferenceResults())
    best = summary.best_path.read_text()
    on_val = [evaluator.evaluate(best, e).score for e in val]
    on_train = [evaluator.evaluate(best, e).score for e in train]
    assert abs(summary.best_val - sum(on_val) / len(on_val)) < 1e-9
    assert abs(summary.best_val - sum(on_train) / len(on_train)) > 1e-6

    # Resume with a larger budget (and another proposer seed, so that it
    # proposes something new): nothing already run is run again.
    second = CountingRunner()
    evolve(_settings(tiny_corpus, run_dir, 30), [Named(seed=2)], say=lambda m: None,
           runner=second)
    assert second.pairs, "the resumed run evaluated nothing new"
    repeated = set(first.pairs) & set(second.pairs)
    assert not repeated, f"{len(repeated)} evaluations repeated after resume"
