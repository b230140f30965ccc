"""Score axes and feedback on results whose numbers are known."""

import copy
from pathlib import Path

import pytest

from routesim_evolve.score.axes import ZERO, ScoreAxes, score_result
from routesim_evolve.score.feedback import describe_result
from routesim_evolve.simulate.result_format import Result

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "result-example.json"


@pytest.fixture
def result() -> Result:
    return Result.model_validate_json(EXAMPLE.read_bytes())


def _payment(index, *, success, attempts=1, parts=1, fee=0, limit=1000, reason="",
             cheapest=0, rounds=1, latency=2.0, feasible=True):
    """A payment whose attempts spread over `rounds` rounds, the arrived
    parts last."""
    def arrived(k: int) -> bool:
        return success and k >= attempts - parts

    log = [{"amount_msat": 1000, "fee_msat": 0, "hops": 2, "time_lock": 0,
            "outcome": "settled" if arrived(k) else "temporary_channel_failure",
            "fail_idx": -1 if arrived(k) else 1, "reported_idx": -1 if arrived(k) else 1,
            "round": min(k, rounds - 1) if k < attempts - 1 else rounds - 1}
           for k in range(attempts)]
    return {
        "index": index, "target": "02" + "00" * 32, "amount_msat": 1_000_000,
        "delivered_msat": 1_000_000 if success else 0, "success": success,
        "feasible": feasible, "bound_msat": 1_000_000 if feasible else 0,
        "attempts": attempts, "parts": parts,
        "fee_msat": fee, "fee_limit_msat": limit,
        "cheapest_fee_msat": cheapest if success else 0, "elapsed_s": rounds * latency,
        "failure_reason": reason, "router_ns": 0, "attempt_log": log,
    }


def _result(payments, template: Result) -> Result:
    data = template.model_dump()
    data["payments"] = payments
    return Result.model_validate(data)


def test_axes_on_known_payments(result):
    res = _result([
        _payment(0, success=True, attempts=2, parts=1, fee=100, limit=1000, cheapest=50,
                 rounds=2),
        _payment(1, success=True, attempts=5, parts=3, fee=0, limit=1000, rounds=1),
        _payment(2, success=False, attempts=5, reason="attempts_exhausted", rounds=5),
        _payment(3, success=False, attempts=1, reason="router_gave_up"),
    ], result)
    axes = score_result(res)
    assert axes.success == pytest.approx(0.5)
    # One failure, then two: 1/2 and 1/3, whatever the parts.
    retry = (1 / 2 + 1 / 3) / 2
    assert axes.retry_efficiency == pytest.approx(retry)
    # Two rounds, then one.
    time = (1 / 2 + 1) / 2
    assert axes.time_efficiency == pytest.approx(time)
    # 50 msat above the cheapest plan's 50, of the 950 above it up to the limit.
    fee = (1 - 50 / 950 + 1.0) / 2
    assert axes.fee_efficiency == pytest.approx(fee)
    assert axes.score == pytest.approx((2 + (retry + time + fee) / 3) / 5)
    terms = axes.terms()
    assert (terms.success, terms.retry, terms.time, terms.fee) == pytest.approx(
        (2 / 5, retry / 3 / 5, time / 3 / 5, fee / 3 / 5))
    assert terms.total == pytest.approx(axes.score)


@pytest.mark.parametrize("fee, cheapest, limit, left", [
    (100, 100, 1000, 1.0),     # the cheapest plan's fee
    (99, 100, 1000, 1.0),      # under it by lnd's rounding
    (550, 100, 1000, 0.5),     # half the budget above the cheapest spent
    (1000, 100, 1000, 0.0),    # the whole budget
    (1000, 1000, 1000, 1.0),   # no room above the cheapest: nothing to save
])
def test_fee_counts_the_budget_above_the_cheapest_plan(result, fee, cheapest, limit, left):
    res = _result([_payment(0, success=True, fee=fee, cheapest=cheapest, limit=limit)], result)
    assert score_result(res).fee_efficiency == pytest.approx(left)


def test_time_is_one_without_latency(result):
    """A scenario whose attempts take no time has every payment as fast."""
    res = _result([_payment(0, success=True, attempts=3, parts=1, rounds=3, latency=0.0)],
                  result)
    assert score_result(res).time_efficiency == 1.0


def test_evaluations_before_version_3_combine_as_they_did():
    """An evaluation cached under version 2 has no time axis and weighed its
    two efficiencies ½ each; a report reading it shows its own score."""
    old = ScoreAxes.model_validate({"success": 0.5, "retry_efficiency": 0.5,
                                    "fee_efficiency": 1.0, "payments": 4})
    assert old.version == 2 and old.score == pytest.approx((2 + 0.25 + 0.5) / 5)


def test_nothing_delivered_scores_zero(result):
    res = _result([_payment(0, success=False, attempts=4, reason="router_gave_up")], result)
    assert score_result(res) == ZERO
    assert score_result(res).terms().model_dump() == {"success": 0.0, "retry": 0.0, "time": 0.0,
                                                      "fee": 0.0}


def test_success_leads_the_score(result):
    """One more delivered payment beats perfect efficiency everywhere else."""
    cheap = _result([_payment(i, success=i < 9, fee=0) for i in range(10)], result)
    costly = _result([
        _payment(i, success=True, attempts=3, fee=900, limit=1000) for i in range(10)
    ], result)
    assert score_result(costly).score > score_result(cheap).score


def test_feedback_names_missed_payments_and_positions(result):
    reference = copy.deepcopy(result)
    first = result.payments[0]
    assert first.success, "the example's first payment should be a delivered one"
    missed = first.model_copy(
        update={"success": False, "failure_reason": "router_gave_up", "error": "no route found"}
    )
    candidate = result.model_copy(update={"payments": (missed, *result.payments[1:])})
    text = describe_result(candidate, {"lnd-apriori": reference})
    assert f"#{missed.index} " in text and "delivered by lnd-apriori" in text
    assert "router_gave_up" in text and "no route found" in text
    assert text.index("Payments lnd delivered") < text.index("How failed payments ended")
    if any(a.fail_idx >= 0 for p in candidate.payments for a in p.attempt_log):
        assert "Where attempts failed" in text
    # With LDK among the references, the heading and each line name it.
    both = describe_result(candidate, {"lnd-apriori": reference, "lnd-bimodal": reference,
                                       "ldk": reference})
    assert "Payments lnd or LDK delivered and you did not (1):" in both
    assert "delivered by lnd-apriori, lnd-bimodal, ldk" in both


@pytest.mark.parametrize("attempts, parts, retry", [
    (1, 1, 1.0),   # nothing failed
    (4, 4, 1.0),   # nothing failed, in four parts
    (2, 1, 1 / 2),  # one failure
    (3, 2, 1 / 2),  # one failure: more parts do not dilute it (scoring version 1 gave 2/3)
    (9, 8, 1 / 2),
    (5, 2, 1 / 4),  # three failures
])
def test_retry_counts_failed_attempts_whatever_the_parts(result, attempts, parts, retry):
    """docs/scoring.md: 1 / (1 + failed attempts) per delivered payment, so
    splitting a payment finer neither hides a failure nor costs one."""
    res = _result([_payment(0, success=True, attempts=attempts, parts=parts)], result)
    assert score_result(res).retry_efficiency == pytest.approx(retry)


def test_feedback_says_what_was_feasible(result):
    data = result.model_dump()
    data["payments"][-1]["feasible"] = False
    data["payments"][-1]["success"] = False
    missed = Result.model_validate(data)
    text = describe_result(missed, {})
    assert f"({result.totals.feasible} feasible in its world" in text
    # A payment lnd delivered and the candidate did not, infeasible in the
    # candidate's own world: its earlier payments spent what it needed.
    lnd = result.model_copy(update={"router": "lnd-apriori"})
    text = describe_result(missed, {"lnd-apriori": lnd})
    assert f"#{len(data['payments']) - 1} " in text and "infeasible in your world" in text


def test_feedback_says_where_the_score_can_still_grow(result):
    """Each axis's most it could add, in score points, with what it counts."""
    res = _result([
        _payment(0, success=True, attempts=3, parts=1, fee=300, cheapest=100, rounds=2),
        _payment(1, success=False, attempts=4, reason="attempts_exhausted"),
        _payment(2, success=False, attempts=1, reason="router_gave_up", feasible=False),
    ], result)
    text = describe_result(res, {})
    assert ("- success +0.250: 1 feasible payment(s) missed (#1); 1 infeasible in your world"
            in text)
    assert "- retry +0.056: 2 failed attempt(s) on delivered payments" in text  # ⅓·(1 − ⅓)/4
    assert "- time +0.042: 1 round(s) after the first" in text                # ⅓·(1 − ½)/4
    assert "- fee +0.019: 200 msat paid above the cheapest plans" in text      # ⅓·(200/900)/4


def test_feedback_says_what_the_oracle_did_with_the_same_payments(result):
    """The ceiling's outcome per payment where the candidate did worse: a
    missed payment's parts, attempts, rounds and fee; totals on the rest."""
    mine = _result([
        _payment(0, success=True, attempts=3, parts=1, fee=300, cheapest=100, rounds=2),
        _payment(1, success=False, attempts=4, reason="attempts_exhausted"),
    ], result)
    oracle = _result([
        _payment(0, success=True, attempts=1, parts=1, fee=120, cheapest=100),
        _payment(1, success=True, attempts=2, parts=2, fee=50, cheapest=40),
    ], result)
    text = describe_result(mine, {}, oracle=oracle)
    assert "What the oracle (it sees every balance: the ceiling) did here:" in text
    assert "- #1 you missed; it delivered it in 2 part(s), 2 attempt(s), 1 round(s), " \
           "fee 50 msat" in text
    assert "- on the 1 payment(s) you both delivered: attempts 3 vs its 1, rounds 2 vs 1, " \
           "fees 300 vs 120 msat" in text
    assert "oracle" not in describe_result(mine, {})


def test_feedback_counts_attempts_by_the_routers_labels(result):
    """A router that names its branches (routing.RouteLabeler) learns which
    one sends the routes that fail."""
    res = _result([_payment(0, success=True, attempts=3, parts=1),
                   _payment(1, success=True, attempts=1, parts=1)], result)
    data = res.model_dump()
    for a, label in zip(data["payments"][0]["attempt_log"], ["flow", "flow", "last-try"],
                        strict=True):
        a["label"] = label
    data["payments"][1]["attempt_log"][0]["label"] = "flow"
    text = describe_result(Result.model_validate(data), {})
    assert "- flow: 3 sent, 2 failed (temporary_channel_failure×2)" in text
    assert "- last-try: 1 sent, 0 failed" in text
    assert "route labels" not in describe_result(res, {})
