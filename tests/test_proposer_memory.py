"""A model sees no earlier conversation: every prompt recalls the proposer's
recent proposals, each in the model's own words with how it fared."""

from __future__ import annotations

import pytest

from routesim_evolve.corpus.load import load_manifest
from routesim_evolve.propose.base import MEMORY
from routesim_evolve.propose.lm import LMProposer
from routesim_evolve.reflect.base import PromptParts
from routesim_evolve.reflect.prompts import GoDocs, PromptPack
from routesim_evolve.reflect.usage import Completion
from routesim_evolve.score.axes import ScoreAxes
from routesim_evolve.score.feedback import ScenarioFeedback


class Scripted:
    """A back-end that answers each prompt with the next reply, and keeps
    the prompts it was sent."""

    name, model = "scripted", None

    def __init__(self, replies: list[str]) -> None:
        self.replies, self.prompts = list(replies), []

    def preflight(self) -> None:
        pass

    def complete(self, prompt: PromptParts) -> Completion:
        self.prompts.append(prompt)
        return Completion(text=self.replies.pop(0))


def _reply(summary: str, k: int) -> str:
    return f"{summary}\n\n```go\npackage main\n\nconst version = {k}\n```\n"


FEEDBACK = [ScenarioFeedback(scenario="s1", arena="base", score=0.5,
                             axes=ScoreAxes(success=0.5, retry_efficiency=1.0,
                                            fee_efficiency=1.0), references={}, text="x")]


@pytest.fixture
def pack(tiny_corpus):
    return PromptPack(load_manifest(tiny_corpus), docs=GoDocs(contract="", toolkit=""))


def test_the_next_prompt_recalls_each_proposal_and_how_it_fared(pack):
    backend = Scripted([_reply("Raise the fee weight: fees ate the budget.", 1),
                        _reply("Split later: early splits failed.", 2),
                        _reply("Same again.", 3)])
    proposer = LMProposer(backend, pack)
    proposer.propose("package main", FEEDBACK)
    proposer.on_candidate_rejected({"old_score": 1.25, "new_score": 1.2})
    proposer.propose("package main", FEEDBACK)
    proposer.on_candidate_accepted({"new_score": 1.3})
    proposer.propose("package main", FEEDBACK)
    first, _, third = (p.dynamic for p in backend.prompts)
    assert "Your recent proposals" not in first
    assert ("- Raise the fee weight: fees ate the budget. — rejected: minibatch sum 1.2500 → "
            "1.2000") in third
    assert "- Split later: early splits failed. — accepted: minibatch sum 1.3000" in third
    assert "Start your reply with one line saying what you change and why" in third


def test_memory_is_bounded_and_survives_a_resume(pack):
    backend = Scripted([_reply(f"Change {k}.", k) for k in range(MEMORY + 3)])
    proposer = LMProposer(backend, pack)
    for _ in range(MEMORY + 2):
        proposer.propose("package main", FEEDBACK)
        proposer.on_unchanged("it repeated its parent")
    resumed = LMProposer(backend, pack)
    resumed.restore(proposer.snapshot())
    resumed.propose("package main", FEEDBACK)
    recalled = [ln for ln in backend.prompts[-1].dynamic.splitlines() if ln.startswith("- Change")]
    assert len(recalled) == MEMORY and recalled[-1].startswith(f"- Change {MEMORY + 1}.")
    assert "not evaluated (it repeated its parent)" in recalled[-1]


def test_the_acceptance_rules_account_reaches_the_memory_either_way(pack):
    """Item 3 of issue 28: each recalled proposal says what moved on each
    axis, whether it was kept or not; the dispatcher hands the rule's account
    of an accepted one to the proposer, since GEPA's event carries none."""
    from routesim_evolve.evolve.rotation import RotatingProposer

    backend = Scripted([_reply("Widen the flow.", 1), _reply("Narrow it.", 2),
                        _reply("Again.", 3)])
    proposer = LMProposer(backend, pack)
    said = ["minibatch sum 1.0000 → 1.1000 (success +0.1000, retry +0.0000, time +0.0000, "
            "fee +0.0000); paired t over its payments 2.10, kept from 1.2"]
    dispatcher = RotatingProposer([proposer], adaptive=False, verdict=lambda: said[0])
    dataset = {"current_candidate": [f.side_info() for f in FEEDBACK]}
    dispatcher({"current_candidate": "package main"}, dataset, ["current_candidate"])
    dispatcher.on_candidate_accepted({"new_score": 1.1})
    dispatcher({"current_candidate": "package main"}, dataset, ["current_candidate"])
    dispatcher.on_candidate_rejected({"old_score": 1.1, "new_score": 1.05, "reason":
                                      "minibatch sum 1.1000 → 1.0500 (success -0.0500, retry "
                                      "+0.0000, time +0.0000, fee +0.0000); paired t over its "
                                      "payments -1.00, kept from 1.2"})
    proposer.propose("package main", FEEDBACK)
    recalled = backend.prompts[-1].dynamic
    assert f"- Widen the flow. — accepted: {said[0]}; then scored on val" in recalled
    assert "- Narrow it. — rejected: minibatch sum 1.1000 → 1.0500 (success -0.0500" in recalled
