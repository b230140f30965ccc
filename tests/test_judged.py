"""What the run says of the children its sequential acceptance judged
(evolve/judged.py): read back from the run log, tabled in the report, and
named when the run kept nothing."""

from __future__ import annotations

from pathlib import Path

import orjson

from routesim_evolve.evolve.judged import judged_children, refused_note, render_judged


def decision(kept: bool, gain: float, low: float, high: float, n: int) -> dict:
    return {"kept": kept, "outcome": "accepted" if kept else "rejected", "gain": gain,
            "low": low, "high": high, "observations": n, "llr": 0.0, "wanted": 0.01}


def write_log(path: Path, records: list[dict]) -> Path:
    path.write_bytes(b"\n".join(orjson.dumps(r) for r in records) + b"\n{cut by a cra")
    return path


def test_children_are_read_back_from_the_log_in_order(tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl", [
        {"event": "start"},
        {"event": "rejected", "iteration": 1, "reason": "r", "decision": decision(
            False, 0.004, -0.002, 0.012, 24)},
        {"event": "rejected", "iteration": 2, "reason": "paired rule: no decision"},
        {"event": "accepted", "iteration": 3, "decision": decision(True, 0.015, 0.006, 0.024, 16)},
    ])
    children = judged_children(log)
    assert [(c.iteration, c.kept, c.observations) for c in children] == [
        (1, False, 24), (3, True, 16)]
    assert children[0].close and not children[1].close
    table = render_judged(children)
    assert "2 children judged, 1 kept; 40 child evaluations" in table
    assert "| 1 | refused | +0.0040 | [-0.0020, +0.0120] | 24 | rejected |" in table
    assert judged_children(tmp_path / "missing.jsonl") == []


def test_a_resumed_rule_recalls_what_it_saw_of_each_child_from_the_log(tmp_path: Path) -> None:
    from routesim_evolve.evolve.sequential import SequentialAcceptance
    from routesim_evolve.score.evaluator import candidate_hash

    sources = ["package main // one", "package main // two"]
    log = write_log(tmp_path / "log.jsonl", [
        {"event": "proposal", "iteration": 1, "children": [candidate_hash(sources[0])]},
        {"event": "rejected", "iteration": 1, "decision": decision(False, 0.004, -0.002, 0.012,
                                                                   24)},
        {"event": "proposal", "iteration": 2, "children": []},
        {"event": "rejected", "iteration": 2, "decision": decision(False, -0.02, -0.03, -0.01,
                                                                   3)},
    ])
    children = judged_children(log)
    assert [c.child for c in children] == [candidate_hash(sources[0]), None]
    rule = SequentialAcceptance()
    assert rule.account_of(sources[0]) is None
    rule.recall((c.child, c) for c in children if c.child)
    assert rule.account_of(sources[0]) == children[0].account()
    assert "+0.0040 [-0.0020, +0.0120] over 24" in rule.account_of(sources[0])
    assert rule.account_of(sources[1]) is None


def test_a_run_that_kept_nothing_names_what_it_refused_and_what_came_close(
        tmp_path: Path) -> None:
    log = write_log(tmp_path / "log.jsonl", [
        {"event": "rejected", "iteration": i, "decision": decision(False, g, g - 0.01, g + hi, 8)}
        for i, (g, hi) in enumerate([(-0.01, 0.005), (0.006, 0.01), (0.001, 0.002)], start=1)])
    note = refused_note(judged_children(log))
    assert note.startswith("The acceptance refused 3 children; the best by gain: iteration 2: "
                           "+0.0060 [-0.0040, +0.0160] over 8 evaluations, rejected")
    assert "1 came close" in note
    assert refused_note([]) == ""


def test_a_language_model_is_advised_only_to_a_run_that_had_none() -> None:
    from routesim_evolve.evolve.driver import _what_helps
    from routesim_evolve.propose.base import Proposer
    from routesim_evolve.propose.offline import OfflineProposer

    class Model(Proposer):
        name = "anthropic"

    assert "give the run a language model" in _what_helps([OfflineProposer()])
    assert "language model" not in _what_helps([Model()])
    assert "language model" not in _what_helps([OfflineProposer(), Model()])
