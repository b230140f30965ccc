"""The offline proposer's knob parsing and its seeded, feedback-guided search."""

import pytest

from routesim_evolve.propose.offline import OfflineProposer
from routesim_evolve.propose.tunables import find_tunables, set_value
from routesim_evolve.score.axes import ScoreAxes
from routesim_evolve.score.feedback import ScenarioFeedback

SOURCE = """package main

const (
	minShardMsat = 10_000_000 // evolve:tunable [1_000_000, 100_000_000] retry
	penalty      = 0.25       // evolve:tunable success
	maxHops int  = 20         // evolve:tunable
	splitRule    = "halving"  // evolve:choice halving|capacity|probability success
	untouched    = 7          // not marked
)
"""


def test_find_tunables_reads_values_bounds_and_axes():
    knobs = {k.name: k for k in find_tunables(SOURCE)}
    assert set(knobs) == {"minShardMsat", "penalty", "maxHops", "splitRule"}
    shard = knobs["minShardMsat"]
    assert (shard.value, shard.is_int, shard.low, shard.high) == (1e7, True, 1e6, 1e8)
    assert shard.axis == "retry_efficiency"
    assert knobs["penalty"].axis == "success" and not knobs["penalty"].is_int
    assert (knobs["maxHops"].low, knobs["maxHops"].high) == (2.0, 200.0)
    assert knobs["splitRule"].options == ["halving", "capacity", "probability"]


def test_set_value_rewrites_only_the_literal():
    knobs = {k.name: k for k in find_tunables(SOURCE)}
    out = set_value(SOURCE, knobs["penalty"], 0.5)
    assert "penalty      = 0.5       // evolve:tunable success" in out
    out = set_value(out, knobs["splitRule"], "capacity")
    assert 'splitRule    = "capacity"  // evolve:choice' in out
    out = set_value(out, knobs["maxHops"], 12.4)
    assert "maxHops int  = 12 " in out
    assert out.count("\n") == SOURCE.count("\n")


def test_a_one_line_declaration_is_named_by_its_name_not_its_keyword():
    source = ('package main\n\nconst feeWeight = 0.3 // evolve:tunable [0, 2] fee\n'
              'var mode string = "a" // evolve:choice a|b\n')
    knobs = {k.name: k for k in find_tunables(source)}
    assert set(knobs) == {"feeWeight", "mode"}
    assert "const feeWeight = 0.5 // evolve:tunable" in set_value(source, knobs["feeWeight"], 0.5)


def test_set_value_refuses_a_moved_line():
    knob = find_tunables(SOURCE)[0]
    with pytest.raises(ValueError, match="minShardMsat"):
        set_value("package main\n\n\n\n", knob, 5)


def test_proposals_are_reproducible_and_stay_in_bounds():
    runs = []
    for _ in range(2):
        proposer = OfflineProposer(seed=3)
        parent, children = SOURCE, []
        for _ in range(20):
            child = proposer.propose(parent, [])
            assert child is not None and child != parent
            children.append(child)
            parent = child  # accept everything
        runs.append(children)
    assert runs[0] == runs[1]
    for child in runs[0]:
        for k in find_tunables(child):
            if k.kind == "number":
                assert k.low <= k.value <= k.high


def test_no_knobs_means_no_proposal():
    assert OfflineProposer().propose("package main\n", []) is None


def _first_moves_of_fee_knob(feedback: list[ScenarioFeedback]) -> int:
    """Over many fresh proposers, how often the first move turns the fee knob."""
    source = SOURCE.replace("retry\n", "fee\n")
    moved = 0
    for seed in range(200):
        child = OfflineProposer(seed=seed).propose(source, feedback)
        moved += "10_000_000" not in child.split("minShardMsat = ")[1][:12]
    return moved


def _feedback(mine: dict[str, float], lnd: dict[str, float]) -> list[ScenarioFeedback]:
    axes, ref = ScoreAxes(**mine), ScoreAxes(**lnd)
    return [ScenarioFeedback(scenario="s", arena="base", score=axes.score, axes=axes,
                             references={"lnd-apriori": ref}, text="")]


def test_feedback_steers_toward_the_weakest_axis():
    """Fees far behind lnd: the fee knob moves first far more often than
    when success is what trails."""
    par = {"success": 1.0, "retry_efficiency": 1.0, "fee_efficiency": 0.9}
    fees_behind = _feedback({**par, "fee_efficiency": 0.1}, par)
    success_behind = _feedback({**par, "success": 0.5}, par)
    assert _first_moves_of_fee_knob(fees_behind) > 2 * _first_moves_of_fee_knob(success_behind)


def test_accepted_moves_are_repeated_in_the_same_direction():
    proposer = OfflineProposer(seed=5)
    source = "package main\n\nconst x = 100 // evolve:tunable [1, 100000]\n"
    child = proposer.propose(source, [])
    went_up = find_tunables(child)[0].value > 100
    for _ in range(5):
        grandchild = proposer.propose(child, [])  # child came back: accepted
        up = find_tunables(grandchild)[0].value > find_tunables(child)[0].value
        child = grandchild
        if up == went_up:
            break
    else:
        pytest.fail("an accepted direction was never repeated")


def test_inert_knobs_take_bigger_steps_and_are_tried_less():
    source = "package main\n\nconst (\n\ta = 100 // evolve:tunable [1, 100000]\n" \
             "\tb = 100 // evolve:tunable [1, 100000]\n)\n"
    proposer = OfflineProposer(seed=2)
    for _ in range(12):
        child = proposer.propose(source, [])
        moved = "a" if find_tunables(child)[0].value != 100 else "b"
        # Knob a never changes a score; knob b always makes things worse.
        proposer.outcome(accepted=False, inert=moved == "a")
    memory = proposer._memory
    assert memory["a"].step > memory["b"].step
    assert memory["a"].inert > 0 and memory["b"].rejected > 0


def test_never_proposes_the_same_child_twice():
    proposer = OfflineProposer(seed=5)
    seen = {SOURCE}
    for _ in range(30):
        child = proposer.propose(SOURCE, [])  # always the same parent: all moves rejected
        if child is None:
            break
        assert child not in seen
        seen.add(child)
        proposer.on_candidate_rejected({"old_score": 1.0, "new_score": 0.9})


def test_exhausted_when_every_knob_is_inert_and_not_before():
    proposer = OfflineProposer(seed=1)
    assert proposer.exhausted() is None
    parent = SOURCE
    for _ in range(200):
        if proposer.exhausted() is not None:
            break
        child = proposer.propose(parent, [])
        assert child is not None
        proposer.on_candidate_rejected({"old_score": 2.0, "new_score": 2.0})  # moved nothing
    why = proposer.exhausted()
    assert why is not None
    for knob in ("minShardMsat", "penalty", "maxHops", "splitRule"):
        assert knob in why

    # Moves that change scores keep the search going.
    lively = OfflineProposer(seed=1)
    for _ in range(30):
        lively.propose(SOURCE, [])
        lively.on_candidate_rejected({"old_score": 2.0, "new_score": 1.5})
        assert lively.exhausted() is None


def test_a_candidate_without_knobs_exhausts_the_proposer_at_once():
    proposer = OfflineProposer()
    assert proposer.propose("package main\n", []) is None
    assert "marks no knob" in (proposer.exhausted() or "")
