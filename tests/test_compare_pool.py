"""score/compare.py runs the references and the candidates in one pool:
each scenario's references start a scenario ahead of its candidates, every
run happens once, and names sharing a source share its evaluations."""

from __future__ import annotations

import threading
from pathlib import Path

from routesim_evolve.corpus.examples import ScenarioExample
from routesim_evolve.score.compare import _job_order, _run_all


def test_job_order_runs_each_job_once_references_a_scenario_ahead():
    order = _job_order(4, ["a", "b"])
    assert sorted(order, key=str) == sorted(
        [(None, i) for i in range(4)] + [(s, i) for s in "ab" for i in range(4)], key=str)
    position = {job: k for k, job in enumerate(order)}
    for i in range(4):
        for source in "ab":
            assert position[(None, i)] < position[(source, i)]
            if i + 1 < 4:  # the next scenario's references are already queued
                assert position[(None, i + 1)] < position[(source, i)]
    assert order[:2] == [(None, 0), (None, 1)]


def test_job_order_without_candidates_is_the_references():
    assert _job_order(3, []) == [(None, 0), (None, 1), (None, 2)]
    assert _job_order(0, ["a"]) == []


class _References:
    def __init__(self) -> None:
        self.ran: list[str] = []
        self.prepared = False
        self.lock = threading.Lock()

    def prepare(self, examples, *, say=None) -> None:
        self.prepared = True

    def results(self, example: ScenarioExample) -> dict:
        with self.lock:
            self.ran.append(example.name)
        return {}


class _Evaluator:
    def __init__(self) -> None:
        self.ran: list[tuple[str, str]] = []
        self.lock = threading.Lock()

    def evaluate(self, source: str, example: ScenarioExample) -> tuple[str, str]:
        with self.lock:
            self.ran.append((source, example.name))
        return (source, example.name)


def _examples(tmp_path: Path, n: int) -> list[ScenarioExample]:
    return [ScenarioExample(split="test", name=f"base-{i}", arena="base",
                            path=tmp_path / f"base-{i}.json", content_hash=f"{i:064x}")
            for i in range(n)]


def test_run_all_runs_references_and_candidates_once_each(tmp_path: Path):
    pool = _examples(tmp_path, 5)
    refs, evaluator, said = _References(), _Evaluator(), []
    got = _run_all({"seed": "S", "best": "S", "other": "O"}, pool, evaluator, refs,  # type: ignore[arg-type]
                   workers=2, on_progress=said.append)
    assert refs.prepared
    assert sorted(refs.ran) == [ex.name for ex in pool]
    assert sorted(evaluator.ran) == sorted((s, ex.name) for s in "SO" for ex in pool)
    assert got["seed"] == got["best"] == [("S", ex.name) for ex in pool]
    assert got["other"] == [("O", ex.name) for ex in pool]
    assert sum(m.startswith("references: ") for m in said) == 5
    assert "seed, best: 5 scenarios scored" in said and "other: 5 scenarios scored" in said
