"""A change of the score formula (scoring version, docs/scoring.md) never
mixes two formulas: cached evaluations of another version are not read
back, a run dir begun under another version does not resume, and the report
of an old run reads its evaluations under its own version and says so."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from report_run import MemoryReferences, make_run

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.report.html import render_run_report
from routesim_evolve.runs.stamp import (
    SCORING_FILE,
    ScoringChanged,
    claim_scoring,
    run_scoring_version,
)
from routesim_evolve.score.axes import SCORING_VERSION
from routesim_evolve.score.evaluator import (
    Evaluation,
    Evaluator,
    ReferenceResults,
    cached_evaluations,
    eval_cache_file,
)

REPO = Path(__file__).resolve().parents[1]


def test_an_evaluation_of_another_version_is_not_read_back(tiny_corpus: Path,
                                                           seed_source: str, tmp_path: Path):
    example = load_examples(tiny_corpus, "val")[0]
    first = Evaluator(ReferenceResults(), cache_dir=tmp_path).evaluate(seed_source, example)
    current = eval_cache_file(tmp_path, seed_source, example)
    assert current.is_file() and f".s{SCORING_VERSION}." in current.name
    # The same pair, as version 1 cached it, with a score of its own.
    old = eval_cache_file(tmp_path, seed_source, example, version=1)
    stale = first.model_copy(update={"axes": first.axes.model_copy(update={"success": 0.123})})
    old.write_text(stale.model_dump_json())
    current.unlink()
    fresh = Evaluator(ReferenceResults(), cache_dir=tmp_path)
    assert fresh.recorded_runs() == 0
    assert fresh.uncached(seed_source, [example]) == 1  # what evaluating it will spend
    again = fresh.evaluate(seed_source, example)
    assert again == first
    assert (fresh.recorded_runs(), fresh.uncached(seed_source, [example])) == (1, 0)
    assert cached_evaluations(tmp_path) == [current]
    assert cached_evaluations(tmp_path, version=1) == [old]
    assert Evaluation.model_validate_json(old.read_bytes()).axes.success == 0.123


@pytest.mark.parametrize("begun_with", ["gepa", "evals"])
def test_a_run_begun_before_the_stamp_is_refused(tmp_path: Path, begun_with: str):
    (tmp_path / begun_with).mkdir()
    with pytest.raises(ScoringChanged, match=rf"{tmp_path}.*scoring version 1\b"):
        claim_scoring(tmp_path)
    assert not (tmp_path / SCORING_FILE).exists()


def test_a_new_run_is_stamped_and_resumes(tmp_path: Path):
    claim_scoring(tmp_path)
    assert json.loads((tmp_path / SCORING_FILE).read_text()) == {"version": SCORING_VERSION}
    (tmp_path / "gepa").mkdir()
    claim_scoring(tmp_path)  # a resume under the same version
    assert run_scoring_version(tmp_path) == SCORING_VERSION


def test_a_run_begun_under_another_simulator_is_refused(tmp_path: Path):
    claim_scoring(tmp_path, simulator="a" * 64)
    (tmp_path / "gepa").mkdir()
    claim_scoring(tmp_path, simulator="a" * 64)  # the same simulator resumes
    with pytest.raises(ScoringChanged, match=r"another simulator \(Go module aaaaaaaaaaaa"):
        claim_scoring(tmp_path, simulator="b" * 64)
    assert json.loads((tmp_path / SCORING_FILE).read_text())["simulator"] == "a" * 64


@pytest.mark.parametrize("stamp", ['{"version": 99}', '{"version": "2"}', "not json"])
def test_a_run_of_another_or_unreadable_stamp_is_refused(tmp_path: Path, stamp: str):
    (tmp_path / "gepa").mkdir()
    (tmp_path / SCORING_FILE).write_text(stamp)
    with pytest.raises(ScoringChanged, match="Start a new run"):
        claim_scoring(tmp_path)
    assert (tmp_path / SCORING_FILE).read_text() == stamp


def test_the_main_command_refuses_to_resume_an_old_run(tmp_path: Path):
    old = tmp_path / "old-run"
    (old / "gepa").mkdir(parents=True)
    run = subprocess.run(
        [sys.executable, "-m", "routesim_evolve", "--corpus", "corpus", "--runs", str(tmp_path),
         "--name", "old-run", "--reflection-lm", "offline"],
        cwd=REPO, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2, run.stderr[-2000:]
    assert str(old) in run.stderr and "scoring version 1" in run.stderr
    assert "Traceback" not in run.stderr
    assert not (old / "evals").exists()


def test_the_report_of_an_old_run_reads_it_under_its_version(tiny_corpus: Path,
                                                             tmp_path: Path):
    run_dir = make_run(tmp_path / "run", tiny_corpus)
    today = render_run_report(run_dir, references=MemoryReferences())
    assert "Scored under scoring version" not in today
    # The same run as version 1 wrote it: no stamp, files named by content alone.
    (run_dir / SCORING_FILE).unlink()
    for path in cached_evaluations(run_dir / "evals"):
        path.rename(path.with_name(path.name.replace(f".s{SCORING_VERSION}.json", ".json")))
    old = render_run_report(run_dir, references=MemoryReferences())
    assert f"Scored under scoring version\n1, not today's {SCORING_VERSION}" in old
    # Its Pareto table still has both candidates' val axes.
    assert old.count("<td>yes</td>") == today.count("<td>yes</td>") > 0


def test_a_run_whose_hidden_worlds_were_drawn_by_another_rule_is_refused(tmp_path: Path):
    """A resume draws its hidden worlds again: under another rule it would
    play other worlds than its saved scores came from."""
    from routesim_evolve.corpus.worlds import FIRST_WORLDS_RULE, WORLDS_RULE, WorldSecret

    hidden = WorldSecret.fresh().rule
    assert hidden == WORLDS_RULE and WorldSecret().rule == ""
    claim_scoring(tmp_path, worlds=hidden)
    (tmp_path / "gepa").mkdir()
    claim_scoring(tmp_path, worlds=hidden)  # the same rule resumes
    with pytest.raises(ScoringChanged, match="another rule for its hidden worlds"):
        claim_scoring(tmp_path, worlds="routesim-worlds/0")
    # A hidden run stamped before the rule was: drawn by the first rule.
    (tmp_path / SCORING_FILE).write_text(json.dumps({"version": SCORING_VERSION}))
    with pytest.raises(ScoringChanged, match=FIRST_WORLDS_RULE):
        claim_scoring(tmp_path, worlds=hidden)
    claim_scoring(tmp_path, worlds="")  # the corpus's own worlds: no rule to differ
