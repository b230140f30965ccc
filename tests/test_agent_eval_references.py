"""An agent's eval script reads lnd's reference results from the trusted
cache and never writes it: a result the run did not compute is an error,
never built from the agent's tree and stored where the scorer reads."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.evolve.agent_eval import AgentEvalError, agent_eval
from routesim_evolve.runs.settings import EvolveSettings
from routesim_evolve.simulate.reference import ReferenceCache, ReferenceMissing


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file())


def test_a_read_only_reference_cache_never_runs_or_writes(tiny_corpus: Path, tmp_path: Path):
    example = load_examples(tiny_corpus, "train")[0]
    refs = ReferenceCache(root=tmp_path, read_only=True)
    with pytest.raises(ReferenceMissing, match=example.path.name):
        refs.result(example.path, "lnd-apriori")
    assert refs.runs == 0 and _files(tmp_path) == []


def test_a_read_only_cache_keeps_a_damaged_entry(tiny_corpus: Path, tmp_path: Path):
    """Only a writer repairs: a reader leaves the entry for the run to redo."""
    example = load_examples(tiny_corpus, "train")[0]
    ReferenceCache(root=tmp_path).result(example.path, "lnd-apriori")
    [entry] = list((tmp_path / "reference").glob("*/*.json"))
    entry.write_text("{ not json")
    with pytest.raises(ReferenceMissing):
        ReferenceCache(root=tmp_path, read_only=True).result(example.path, "lnd-apriori")
    assert entry.read_text() == "{ not json"


def test_agent_eval_without_the_runs_references_stops_and_stores_nothing(
        tiny_corpus: Path, seed_source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    run_dir, trusted = tmp_path / "run", tmp_path / "trusted"
    run_dir.mkdir()
    trusted.mkdir()
    settings = EvolveSettings(corpus=tiny_corpus, run_dir=run_dir)
    (run_dir / "settings.json").write_bytes(orjson.dumps(settings.model_dump(mode="json")))
    monkeypatch.setenv("ROUTESIM_CACHE_DIR", str(tmp_path / "agent-sandbox"))
    example = load_examples(tiny_corpus, "train")[0]
    with pytest.raises(AgentEvalError, match="not in the reference cache"):
        agent_eval(run_dir, [example.name], seed_source, references_root=trusted,
                   log_path=tmp_path / "agent.log", say=lambda _: None)
    assert _files(trusted) == []
