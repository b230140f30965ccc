"""The scorer's own checks of a result against its scenario: an honest
result passes, and each forgery class is caught and named."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.corpus.schema import Scenario
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.score.invariants import result_violations
from routesim_evolve.simulate.result_format import Result

EXAMPLES = Path(__file__).resolve().parents[1] / "docs" / "examples"
RESULT = EXAMPLES / "result-example.json"  # attribution-example.json, seed router
SCENARIO = Scenario.model_validate_json((EXAMPLES / "attribution-example.json").read_bytes())


def _forged(change: Callable[[dict[str, Any]], None]) -> Result:
    doc = orjson.loads(RESULT.read_bytes())
    change(doc)
    return Result.model_validate(doc)


def _first_success(doc: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in doc["payments"] if p["success"])


def _first_failure(doc: dict[str, Any]) -> dict[str, Any]:
    return next(p for p in doc["payments"] if not p["success"])


def _claim_success(doc: dict[str, Any]) -> None:
    p = _first_failure(doc)
    p.update(success=True, delivered_msat=p["amount_msat"], failure_reason="")


def _no_attempts(doc: dict[str, Any]) -> None:
    for p in doc["payments"]:
        p.update(success=True, delivered_msat=p["amount_msat"], attempts=0, parts=0,
                 attempt_log=[], fee_msat=0, failure_reason="")


def _many_attempts(doc: dict[str, Any]) -> None:
    p = _first_success(doc)
    p["attempt_log"] = [dict(p["attempt_log"][0], round=i) for i in range(41)]
    p["attempts"] = 41


def _wide_round(doc: dict[str, Any]) -> None:
    p = _first_failure(doc)
    p["attempt_log"] = [dict(a, round=0) for a in p["attempt_log"]] * 17
    p["attempts"] = len(p["attempt_log"])


def _over_fee(doc: dict[str, Any]) -> None:
    p = _first_success(doc)
    p["fee_msat"] = p["fee_limit_msat"] * 2
    p["attempt_log"][-1]["fee_msat"] = p["fee_msat"]


def _long_route(doc: dict[str, Any]) -> None:
    _first_success(doc)["attempt_log"][0]["hops"] = 31


def _late_lock(doc: dict[str, Any]) -> None:
    _first_success(doc)["attempt_log"][0]["time_lock"] = 2**32 - 1


def _other_amount(doc: dict[str, Any]) -> None:
    p = _first_success(doc)
    p["amount_msat"] = p["delivered_msat"] = 1


def _beaten_bound(doc: dict[str, Any]) -> None:
    p = _first_success(doc)
    p["feasible"], p["bound_msat"] = False, p["amount_msat"] - 1


def _bound_over_amount(doc: dict[str, Any]) -> None:
    _first_success(doc)["bound_msat"] += 1


def _below_cheapest(doc: dict[str, Any]) -> None:
    p = _first_success(doc)
    allowance = sum(a["hops"] - 1 for a in p["attempt_log"] if a["fail_idx"] < 0)
    p["cheapest_fee_msat"] = p["fee_msat"] + allowance + 1


def _cheapest_of_a_failure(doc: dict[str, Any]) -> None:
    _first_failure(doc)["cheapest_fee_msat"] = 1


def _quick_time(doc: dict[str, Any]) -> None:
    _first_success(doc)["elapsed_s"] = 0.5


@pytest.mark.parametrize(
    ("forge", "said"),
    [
        (_claim_success, "arrived parts carry"),
        (_no_attempts, "succeeded with"),
        (_many_attempts, "over the cap of 40"),
        (_wide_round, "parts in flight in one round"),
        (_over_fee, "over the limit"),
        (_long_route, "31 hops"),
        (_late_lock, "past the cltv limit"),
        (_other_amount, "amount differ"),
        (_beaten_bound, "feasible bound says no router"),
        (_bound_over_amount, "but the bound allows"),
        (_below_cheapest, "below the cheapest plan"),
        (_cheapest_of_a_failure, "undelivered, yet a cheapest plan"),
        (_quick_time, "s elapsed, but"),
    ],
)
def test_each_forgery_is_named(forge: Callable[[dict[str, Any]], None], said: str):
    problems = result_violations(_forged(forge), SCENARIO)
    assert any(said in p for p in problems), problems


def test_an_honest_result_passes():
    assert result_violations(Result.model_validate_json(RESULT.read_bytes()), SCENARIO) == []


def test_the_rounding_allowance_is_allowed():
    """A fee under the cheapest plan by lnd's rounding (under 1 msat a hop
    after the first, per arrived part) is honest."""
    def at_allowance(doc: dict[str, Any]) -> None:
        p = _first_success(doc)
        allowance = sum(a["hops"] - 1 for a in p["attempt_log"] if a["fail_idx"] < 0)
        assert allowance > 0
        p["cheapest_fee_msat"] = p["fee_msat"] + allowance

    assert result_violations(_forged(at_allowance), SCENARIO) == []


def test_lnd_results_keep_every_rule(tiny_corpus: Path):
    """The checks hold for lnd's real stack too: they are rules of the
    payment, not of one router's habits."""
    refs = ReferenceResults()
    for split in ("train", "val", "test"):
        for example in load_examples(tiny_corpus, split):
            scenario = Scenario.model_validate_json(example.path.read_bytes())
            for name, result in refs.results(example).items():
                assert result_violations(result, scenario) == [], (example.name, name)


def test_a_forged_result_scores_zero_with_the_reason(tiny_corpus: Path):
    from routesim_evolve.simulate.run_outcome import RunOutcome, RunStatus

    example = load_examples(tiny_corpus, "val")[0]
    honest = next(iter(ReferenceResults().results(example).values()))
    doc = honest.model_dump(mode="json")
    _no_attempts(doc)
    forged = Result.model_validate(doc)

    def runner(source: str, path: Path) -> RunOutcome:
        return RunOutcome(status=RunStatus.OK, scenario=str(path), result=forged)

    ev = Evaluator(ReferenceResults(), runner=runner).evaluate("package main", example)
    assert ev.score == 0 and ev.status == "invalid_result"
    assert "breaks the payment rules" in ev.feedback and "succeeded with" in ev.feedback
