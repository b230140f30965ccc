"""The proposal dispatcher: skipping failed proposals, rotating on plateaus,
and the agentic proposer's minibatch eval script."""

from __future__ import annotations

import subprocess
from pathlib import Path

from routesim_evolve.corpus.load import load_manifest, load_split
from routesim_evolve.evolve.rotation import RotatingProposer
from routesim_evolve.propose.agentic import AgenticProposer, minibatch_names
from routesim_evolve.propose.base import Proposer
from routesim_evolve.reflect.prompts import PromptPack


class Fixed(Proposer):
    def __init__(self, name: str, child: str | None = None, fail: bool = False) -> None:
        self.name, self.child, self.fail, self.calls = name, child, fail, 0
        self.notes: list[str] = []
        self.dry: str | None = None

    def on_unchanged(self, note: str) -> None:
        self.notes.append(note)

    def exhausted(self) -> str | None:
        return self.dry

    def propose(self, parent, feedback):
        self.calls += 1
        if self.fail:
            raise RuntimeError("the model is down")
        return self.child


def _call(d: RotatingProposer) -> dict[str, str]:
    return d({"current_candidate": "parent"}, {"current_candidate": []}, ["current_candidate"])


def test_failed_or_empty_proposals_skip_the_iteration():
    for proposer in (Fixed("a", fail=True), Fixed("b", child=None), Fixed("c", child="parent")):
        d = RotatingProposer([proposer])
        assert _call(d) == {} and d.skipped == 1
    assert _call(RotatingProposer([Fixed("d", child="child")])) == {"current_candidate": "child"}


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

    def __init__(self) -> None:
        self.script_output = ""

    def propose_in_workdir(self, prompt, candidate, *, eval_script=None, workdir=None,
                           writable_dirs=()):
        edited = candidate.replace("maxHops = 20", "maxHops = 12")
        work = Path(eval_script).parent
        (work / "candidate_impl.go").write_text(edited)
        out = subprocess.run([str(eval_script)], cwd=work, capture_output=True, text=True,
                             check=True)
        self.script_output = out.stdout
        return edited


def test_agentic_proposer_gives_the_agent_a_working_minibatch_eval(tiny_corpus, seed_source):
    pack = PromptPack(load_manifest(tiny_corpus), contract="(contract)")
    train = load_split(tiny_corpus, "train")
    feedback = [{"Scenario": f"{s.name} ({s.arena})", "Feedback": "…"} for s in train[:1]]
    assert minibatch_names(feedback) == [train[0].name]
    agent = FakeAgent()
    child = AgenticProposer(agent, pack, tiny_corpus).propose(seed_source, feedback)
    assert "maxHops = 12" in child
    assert f"| {train[0].name} |" in agent.script_output
    assert "lnd-apriori" in agent.script_output
    assert train[1].name not in agent.script_output


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

    proposer = PromptedProposer(PromptPack(load_manifest(tiny_corpus), contract="(contract)"))
    assert "Note:" not in proposer.prompt(seed_source, []).dynamic
    proposer.on_unchanged("your previous reply was identical to the candidate")
    assert proposer.snapshot() == {"note": "your previous reply was identical to the candidate"}
    noted = proposer.prompt(seed_source, []).dynamic
    assert "Note: your previous reply was identical to the candidate" in noted
    assert "Note:" not in proposer.prompt(seed_source, []).dynamic
