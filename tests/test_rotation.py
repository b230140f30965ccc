"""The proposal dispatcher: skipping failed proposals, stopping on
permanent ones and on bugs, rotating on plateaus, and the agentic
proposer's minibatch eval script."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.corpus.load import load_manifest
from routesim_evolve.evolve.rotation import (
    MAX_FAILURES_IN_A_ROW,
    MAX_PERMANENT_FAILURES,
    REPEATS_PER_PROPOSER,
    ProposalsKeepFailing,
    RotatingProposer,
)
from routesim_evolve.propose.agentic import AgenticProposer
from routesim_evolve.propose.base import Proposer
from routesim_evolve.propose.eval_service import AGENT_EVALS, MinibatchEvaluations
from routesim_evolve.reflect.errors import ProposalFailed
from routesim_evolve.reflect.prompts import GoDocs, PromptPack
from routesim_evolve.reflect.usage import Completion
from routesim_evolve.score.axes import ScoreAxes
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.score.feedback import ScenarioFeedback


class Fixed(Proposer):
    def __init__(self, name: str, child: str | None = None,
                 fail: BaseException | None = None) -> None:
        self.name, self.child, self.fail, self.calls = name, child, fail, 0
        self.notes: list[str] = []
        self.dry: str | None = None
        self.feedback: list[ScenarioFeedback] = []

    def on_unchanged(self, note: str) -> None:
        self.notes.append(note)

    def exhausted(self) -> str | None:
        return self.dry

    def propose(self, parent, feedback):
        self.calls += 1
        self.feedback = list(feedback)
        if self.fail:
            raise self.fail
        return self.child


STUB_DOCS = GoDocs(contract="(contract)", toolkit="(toolkit)")


def feedback(scenario: str, arena: str) -> ScenarioFeedback:
    axes = ScoreAxes(success=0.5, retry_efficiency=0.4, fee_efficiency=0.9)
    return ScenarioFeedback(scenario=scenario, arena=arena, score=axes.score, axes=axes,
                            references={"lnd-apriori": axes}, text="delivered 1/2")


def _call(d: RotatingProposer, items: list[ScenarioFeedback] = ()) -> dict[str, str]:
    dataset = {"current_candidate": [f.side_info() for f in items]}
    return d({"current_candidate": "parent"}, dataset, ["current_candidate"])


def test_failed_or_empty_proposals_skip_the_iteration():
    for proposer in (Fixed("a", fail=ProposalFailed("the model is down")),
                     Fixed("b", child=None), Fixed("c", child="parent")):
        d = RotatingProposer([proposer])
        assert _call(d) == {} and d.skipped == 1 and d.fatal is None
    assert _call(RotatingProposer([Fixed("d", child="child")])) == {"current_candidate": "child"}


def test_proposers_get_typed_feedback_from_gepas_dataset():
    """As GEPA hands it over: our side info, with its `scores` key renamed."""
    proposer = Fixed("a", child="child")
    items = [feedback("s1", "base"), feedback("s2", "drift")]
    entries = [{"Scores (Higher is Better)": f.axes.as_dict(),
                **{k: v for k, v in f.side_info().items() if k != "scores"}} for f in items]
    RotatingProposer([proposer])({"c": "parent"}, {"c": entries}, ["c"])
    assert proposer.feedback == items


def test_permanent_failures_in_a_row_stop_the_run_sooner_than_transient_ones():
    refused = ProposalFailed("HTTP 401: invalid x-api-key", permanent=True)
    d = RotatingProposer([Fixed("a", fail=refused)])
    for _ in range(MAX_PERMANENT_FAILURES - 1):
        assert _call(d) == {} and d.fatal is None
    assert _call(d) == {}
    assert isinstance(d.fatal, ProposalsKeepFailing)
    assert "from a: HTTP 401: invalid x-api-key" in str(d.fatal)

    flaky = Fixed("b", fail=ProposalFailed("gave up after 4 tries: HTTP 529"))
    d = RotatingProposer([flaky])
    for _ in range(MAX_FAILURES_IN_A_ROW - 1):
        _call(d)
    assert MAX_FAILURES_IN_A_ROW > MAX_PERMANENT_FAILURES
    assert d.fatal is None and d.skipped == MAX_FAILURES_IN_A_ROW - 1
    _call(d)
    assert isinstance(d.fatal, ProposalsKeepFailing)
    assert f"{MAX_FAILURES_IN_A_ROW} proposals in a row failed" in str(d.fatal)
    assert "HTTP 529" in str(d.fatal)


@pytest.mark.parametrize("permanent,limit", [(True, MAX_PERMANENT_FAILURES),
                                              (False, MAX_FAILURES_IN_A_ROW)])
def test_a_success_resets_the_count_of_failures(permanent: bool, limit: int):
    proposer = Fixed("a", fail=ProposalFailed("HTTP 400", permanent=permanent))
    d = RotatingProposer([proposer])
    for _ in range(limit - 1):
        _call(d)
    proposer.fail, proposer.child = None, "child"
    _call(d)
    proposer.fail = ProposalFailed("HTTP 400", permanent=permanent)
    _call(d)
    assert d.fatal is None


def test_a_bug_in_a_proposer_is_not_turned_into_skipped_iterations():
    d = RotatingProposer([Fixed("a", fail=KeyError("feedback"))])
    with pytest.raises(KeyError):
        _call(d)
    assert isinstance(d.fatal, KeyError) and d.skipped == 0


def test_a_repeated_candidate_is_never_evaluated_and_the_proposer_hears_why():
    same = Fixed("same", child="parent")
    d = RotatingProposer([same])
    assert _call(d) == {} and d.unchanged == 1
    assert "identical to the candidate it was asked to improve" in same.notes[-1]

    again = Fixed("again", child="child")
    d = RotatingProposer([again])
    assert _call(d) == {"current_candidate": "child"}
    assert _call(d) == {} and d.unchanged == 1  # the same child a second time
    assert "already evaluated" in again.notes[-1]

    d = RotatingProposer([Fixed("seedy", child="seed")])
    d.on_optimization_start({"seed_candidate": {"current_candidate": "seed"}})
    assert _call(d) == {}, "the seed itself is an evaluated candidate"


def test_repeats_in_a_row_rotate_then_stop_the_run():
    first, second = Fixed("first", child="parent"), Fixed("second", child="parent")
    d = RotatingProposer([first, second])
    for _ in range(REPEATS_PER_PROPOSER):
        _call(d)
    assert d.current is second and d.fatal is None
    assert first.calls == REPEATS_PER_PROPOSER
    for _ in range(REPEATS_PER_PROPOSER):
        _call(d)
    assert isinstance(d.fatal, ProposalsKeepFailing)
    assert f"{2 * REPEATS_PER_PROPOSER} replies in a row repeated" in str(d.fatal)


def test_a_new_candidate_resets_the_repeats():
    proposer = Fixed("a", child="parent")
    d = RotatingProposer([proposer])
    for _ in range(REPEATS_PER_PROPOSER - 1):
        _call(d)
    proposer.child = "new"
    _call(d)
    proposer.child = "parent"
    for _ in range(REPEATS_PER_PROPOSER - 1):
        _call(d)
    assert d.fatal is None and d.repeats == REPEATS_PER_PROPOSER - 1


def test_a_repeat_does_not_reset_the_failures_in_a_row():
    proposer = Fixed("a", fail=ProposalFailed("HTTP 400", permanent=True))
    d = RotatingProposer([proposer])
    for _ in range(MAX_PERMANENT_FAILURES - 1):
        _call(d)
    proposer.fail, proposer.child = None, "parent"
    _call(d)  # a repeat
    proposer.fail = ProposalFailed("HTTP 400", permanent=True)
    _call(d)
    assert isinstance(d.fatal, ProposalsKeepFailing) and "HTTP 400" in str(d.fatal)


def test_an_exhausted_proposer_hands_over_and_all_exhausted_stops_the_run():
    a, b = Fixed("a", child="x"), Fixed("b", child="y")
    d = RotatingProposer([a, b], adaptive=False)
    a.dry = "no knobs"
    assert d.exhausted() is None
    assert _call(d) == {"current_candidate": "y"} and d.current is b
    b.dry = "out of ideas"
    assert d.exhausted() == "a: no knobs; b: out of ideas"


def test_rotates_after_a_plateau_and_not_before():
    a, b = Fixed("a", child="x"), Fixed("b", child="y")
    d = RotatingProposer([a, b], plateau_evals=10)
    d.on_valset_evaluated({"average_score": 0.5})
    d.on_budget_updated({"metric_calls_used": 9})
    assert d.current is a
    d.on_valset_evaluated({"average_score": 0.6})  # improvement at 9 calls
    d.on_budget_updated({"metric_calls_used": 18})
    assert d.current is a
    d.on_budget_updated({"metric_calls_used": 19})
    assert d.current is b and d.rotations == [(19, "b")]
    assert _call(d) == {"current_candidate": "y"}
    d.on_budget_updated({"metric_calls_used": 29})
    assert d.current is a  # round robin


def test_no_rotation_when_not_adaptive():
    d = RotatingProposer([Fixed("a"), Fixed("b")], adaptive=False, plateau_evals=1)
    d.on_budget_updated({"metric_calls_used": 100})
    assert d.current.name == "a"


class FakeAgent:
    """Behaves like AgentCLIBackend.propose_in_workdir: runs the eval script
    on its edit, as an agent may, and returns the edited file."""

    name = "fake-agent"

    def __init__(self, edit: Callable[[str], str]) -> None:
        self.edit = edit
        self.script_output = ""
        self.writable: list[Path] = []

    def propose_in_workdir(self, prompt, candidate, *, eval_script=None, workdir=None,
                           writable_dirs=()):
        edited = self.edit(candidate)
        self.writable = list(writable_dirs)
        with tempfile.TemporaryDirectory() as work:
            (Path(work) / "candidate_impl.go").write_text(edited)
            # As codex runs it: a PATH without the Go toolchain's folder.
            path = ":".join(p for p in os.environ["PATH"].split(":")
                            if not (Path(p) / "go").exists())
            out = subprocess.run([str(eval_script)], cwd=work, capture_output=True, text=True,
                                 check=True, env={**os.environ, "PATH": path}, timeout=600)
        self.script_output = out.stdout
        return Completion(text=edited, said="Lowered\n maxHops.")


def _agent_evaluations(tmp_path: Path, tiny_corpus: Path) -> tuple[Path, MinibatchEvaluations,
                                                                   list]:
    """A run dir and the agents' scorer as the driver makes them."""
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    train = load_examples(tiny_corpus, "train")
    references = ReferenceResults()
    references.precompute(train, workers=1)
    evaluator = Evaluator(references, cache_dir=run_dir / AGENT_EVALS)
    return run_dir, MinibatchEvaluations(evaluator, references, train), train


def test_agentic_proposer_gives_the_agent_a_working_minibatch_eval(
    tmp_path, tiny_corpus, seed_source, caplog
):
    pack = PromptPack(load_manifest(tiny_corpus), docs=STUB_DOCS)
    run_dir, evaluations, train = _agent_evaluations(tmp_path, tiny_corpus)
    agent = FakeAgent(lambda src: src.replace("maxHops = 20", "maxHops = 12"))
    proposer = AgenticProposer(agent, pack)
    proposer.attach_evaluations(evaluations)
    child = proposer.propose(seed_source, [feedback(train[0].name, train[0].arena)])
    assert "maxHops = 12" in child
    # Its next prompt recalls what the agent said with the edit.
    proposer.on_candidate_rejected({"old_score": 1.0, "new_score": 0.9})
    recalled = proposer.prompt(seed_source, [feedback(train[0].name, train[0].arena)]).dynamic
    assert "- Lowered maxHops. — rejected: minibatch sum 1.0000 → 0.9000" in recalled
    assert f"## {train[0].name} ({train[0].arena}): score" in agent.script_output
    assert "lnd-apriori" in agent.script_output
    assert train[1].name not in agent.script_output
    # The agent may write only the server's spool folder, outside the run
    # dir, whose evaluations it never touches: the server keeps its own.
    (spool,) = agent.writable
    assert run_dir not in spool.parents and not spool.exists()
    assert not (run_dir / "evals").exists() and any((run_dir / AGENT_EVALS).iterdir())

    broken = FakeAgent(lambda src: src + '\nfunc broken() int { return "one" }\n')
    caplog.set_level("INFO")
    proposer = AgenticProposer(broken, pack)
    proposer.attach_evaluations(evaluations)
    proposer.propose(seed_source, [feedback(train[0].name, train[0].arena)])
    # Why it could not be built reaches the agent and the run's log.
    assert "score 0.000 [compile_error]" in broken.script_output
    assert 'cannot use "one"' in broken.script_output
    assert any("agent eval" in r.message and 'cannot use "one"' in r.message
               for r in caplog.records)


class Listening(Fixed):
    def __init__(self, name: str, child: str) -> None:
        super().__init__(name, child)
        self.verdicts: list[str] = []

    def on_candidate_accepted(self, event):
        self.verdicts.append("accepted")

    def on_candidate_rejected(self, event):
        self.verdicts.append("rejected")


def test_verdicts_reach_the_proposer_that_proposed_even_after_a_rotation():
    a, b = Listening("a", "x"), Listening("b", "y")
    d = RotatingProposer([a, b], plateau_evals=5)
    _call(d)  # a proposes
    d.on_budget_updated({"metric_calls_used": 10})  # the child's evaluation ends a plateau
    assert d.current is b
    d.on_candidate_rejected({"old_score": 1.0, "new_score": 0.5})
    assert a.verdicts == ["rejected"] and b.verdicts == []
    _call(d)
    d.on_candidate_accepted({"new_score": 2.0})
    assert b.verdicts == ["accepted"]


def test_the_next_prompt_says_the_reply_changed_nothing_once(tiny_corpus, seed_source):
    from routesim_evolve.propose.base import PromptedProposer

    proposer = PromptedProposer(PromptPack(load_manifest(tiny_corpus), docs=STUB_DOCS))
    assert "Note:" not in proposer.prompt(seed_source, []).dynamic
    proposer.on_unchanged("your previous reply was identical to the candidate")
    assert proposer.snapshot()["note"] == "your previous reply was identical to the candidate"
    noted = proposer.prompt(seed_source, []).dynamic
    assert "Note: your previous reply was identical to the candidate" in noted
    assert "Note:" not in proposer.prompt(seed_source, []).dynamic
