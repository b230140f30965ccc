"""The agreement table's matching (routesim_evolve/realnet/agreement.py), on
attempts written by hand: no real node is needed to check how a round's real
outcomes are set beside the simulator's predictions."""

from __future__ import annotations

from routesim_evolve.realnet.agreement import (
    ARRIVED_AT,
    Outcome,
    _causes,
    _match_interchangeable,
)
from routesim_evolve.realnet.play import RealAttempt

TCF = "TEMPORARY_CHANNEL_FAILURE"
FAILED_AT_1 = Outcome(TCF, 1)


def _attempt(scids: list[str], amount: int, outcome: str, index: int = -1) -> RealAttempt:
    return RealAttempt(round=1, amount_msat=amount, fee_msat=0, scids=scids, outcome=outcome,
                       failure_index=index, has_update=index >= 0, seconds=0.0)


def test_identical_shards_are_matched_as_a_multiset() -> None:
    # Three shards over the same channels with the same amount: the simulator
    # fails the third, the real nodes the second. No rule tells them apart.
    round_ = [_attempt(["x", "y"], 10, "held"), _attempt(["x", "y"], 10, TCF, 1),
              _attempt(["x", "y"], 10, "settled")]
    said = [ARRIVED_AT, ARRIVED_AT, FAILED_AT_1]
    matched = _match_interchangeable(round_, said)
    assert matched == [ARRIVED_AT, FAILED_AT_1, ARRIVED_AT]
    assert _causes(round_, matched) == ["", "", ""]


def test_shards_that_differ_are_not_interchangeable() -> None:
    round_ = [_attempt(["x", "y"], 10, "held"), _attempt(["x", "y"], 11, TCF, 1)]
    said = [FAILED_AT_1, ARRIVED_AT]
    assert _match_interchangeable(round_, said) == said


def test_two_shards_that_swapped_fates_at_one_channel_raced() -> None:
    # The long route reaches channel c at its third hop, the short one at
    # its second: the real nodes let the short one through c first.
    round_ = [_attempt(["a", "b", "c", "d"], 86, TCF, 2), _attempt(["e", "c", "d"], 21, "held")]
    said = [ARRIVED_AT, FAILED_AT_1]
    causes = _causes(round_, _match_interchangeable(round_, said))
    assert all(c.startswith("raced another shard of its round for c") for c in causes), causes


def test_a_lone_disagreement_is_unexplained() -> None:
    round_ = [_attempt(["a", "b"], 5, TCF, 1)]
    assert _causes(round_, [ARRIVED_AT]) == [
        "unexplained: the rules and the real node differ on this state"]
