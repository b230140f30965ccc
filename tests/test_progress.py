"""The run's progress display: a live panel on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io
import re

from routesim_evolve.evolve.progress import LineView, LiveView, ProgressSnapshot, make_view

SNAP = ProgressSnapshot(elapsed_s=125.0, used=40, limit=160, best_val=0.8123,
                        proposer="anthropic:claude-opus-4-7", cost="$1.25",
                        evals_per_min=19.2, eta_s=375.0)


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_plain_lines_off_a_terminal_carry_every_figure():
    out = io.StringIO()
    view = make_view(out)
    assert isinstance(view, LineView)
    view.show(SNAP, "iteration 7: accepted")
    line = out.getvalue()
    assert line.count("\n") == 1
    for part in ("evals 40/160", "best val 0.8123", "cost $1.25",
                 "proposer anthropic:claude-opus-4-7", "19.2 evals/min", "~6m15s left",
                 "iteration 7: accepted"):
        assert part in line, part


def test_a_terminal_gets_a_live_panel_with_events_above_it():
    out = Terminal()
    view = make_view(out)
    assert isinstance(view, LiveView)
    view.show(SNAP, "iteration 7: accepted [minibatch 2.1 > 1.9]")
    view.show(SNAP.model_copy(update={"used": 44, "best_val": 0.82}), "")
    view.close()
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue())  # drop the terminal codes
    for part in ("metric calls", "44 of 160 (28 %)", "best val score", "0.8200",
                 "evaluations/min", "19.2", "cost so far", "$1.25", "~6m15s left",
                 "iteration 7: accepted [minibatch 2.1 > 1.9]"):
        assert part in text, part


def test_before_the_first_evaluation_there_is_no_rate_or_estimate():
    first = SNAP.model_copy(update={"evals_per_min": None, "eta_s": None, "cost": "",
                                    "best_val": None})
    line = first.line()
    assert "best val —" in line and "evals/min" not in line and "left" not in line
    assert "cost" not in line


def test_an_iteration_without_a_new_candidate_is_not_called_not_better(tmp_path):
    from routesim_evolve.evolve.budget import EvalBudget
    from routesim_evolve.evolve.runlog import RunLog

    out = io.StringIO()
    log = RunLog(tmp_path, budget=EvalBudget(100, minibatch=3, val_size=8, spent=lambda: 0),
                 stream=out)
    log.on_proposal_end({"iteration": 1, "new_instructions": {}})
    log.on_iteration_end({"iteration": 1, "proposal_accepted": False})
    log.on_proposal_end({"iteration": 2, "new_instructions": {"c": "package main // child"}})
    log.on_iteration_end({"iteration": 2, "proposal_accepted": False})
    lines = out.getvalue().splitlines()
    assert "iteration 1: skipped: no new candidate to evaluate" in lines[0]
    assert "iteration 2: not better" in lines[1]
