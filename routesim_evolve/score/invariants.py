"""What every honest result satisfies, checked from the scenario file.

The scorer does not trust the binary: a candidate runs in the same process
as the simulator, so a hole in the runner (or a forged result file) must
not turn into a score. These checks read the payment rules from the
scenario itself (amounts, fee limits, part and attempt caps, the cltv
limit), never from the result, and recompute every total from the attempt
log. A result that breaks one scores 0, and the feedback says which.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from routesim_evolve.corpus.schema import Payment, Scenario
from routesim_evolve.simulate.result_format import PaymentResult, Result

#: Seconds per block on the simulator's virtual clock (go/sim/world.go).
BLOCK_INTERVAL_S = 600
#: The onion's hop limit (go/routing/limits.go, MaxRouteHops; docs/examples/limits.json
#: carries it here, tests/test_limits_parity.py checks the two agree).
MAX_ROUTE_HOPS = 20
#: Attempt outcomes that delivered their amount.
ARRIVED = ("settled", "held")


def result_violations(result: Result, scenario: Scenario) -> list[str]:
    """Every rule the result breaks, in words; empty for an honest result."""
    problems: list[str] = []
    if result.scenario != scenario.name:
        problems.append(f"result is for scenario {result.scenario!r}, not {scenario.name!r}")
    if len(result.payments) != len(scenario.payments):
        problems.append(
            f"result has {len(result.payments)} payments, the scenario {len(scenario.payments)}"
        )
        return problems
    for i, (paid, asked) in enumerate(zip(result.payments, scenario.payments, strict=True)):
        problems += [f"payment {i}: {p}" for p in _payment_violations(i, paid, asked, scenario)]
    return problems


def _payment_violations(
    i: int, paid: PaymentResult, asked: Payment, scenario: Scenario
) -> Iterator[str]:
    rules = scenario.defaults
    fee_limit = asked.fee_limit(rules)
    if (paid.index, paid.target, paid.amount_msat) != (i, asked.target, asked.amount_msat):
        yield "index, target or amount differ from the scenario's"
    if paid.fee_limit_msat != fee_limit:
        yield f"fee limit {paid.fee_limit_msat} msat, the scenario's is {fee_limit}"
    log = paid.attempt_log
    if paid.attempts != len(log):
        yield f"{paid.attempts} attempts counted, {len(log)} logged"
    if len(log) > asked.attempts(rules):
        yield f"{len(log)} attempts, over the cap of {asked.attempts(rules)}"
    per_round = Counter(a.round for a in log)
    if per_round and max(per_round.values()) > asked.parts(rules):
        yield (f"{max(per_round.values())} parts in flight in one round, over the cap of "
               f"{asked.parts(rules)}")
    cltv_ceiling = _cltv_ceiling(i, scenario)
    for a in log:
        if not 1 <= a.hops <= MAX_ROUTE_HOPS:
            yield f"an attempt with {a.hops} hops (1 to {MAX_ROUTE_HOPS} allowed)"
        if a.time_lock > cltv_ceiling:
            yield f"an attempt with time lock {a.time_lock}, past the cltv limit {cltv_ceiling}"
    arrived = [a for a in log if a.outcome in ARRIVED]
    amount = sum(a.amount_msat for a in arrived)
    fees = sum(a.fee_msat for a in arrived)
    if paid.parts != len(arrived):
        yield f"{paid.parts} parts counted, {len(arrived)} arrived in the log"
    if paid.success != (amount == asked.amount_msat):
        yield (f"success is {paid.success} but the arrived parts carry {amount} of "
               f"{asked.amount_msat} msat")
    if paid.success and (paid.delivered_msat != asked.amount_msat or not arrived):
        yield f"succeeded with {paid.delivered_msat} of {asked.amount_msat} msat delivered"
    if paid.success and not paid.feasible:
        yield "succeeded although the feasible bound says no router could deliver it"
    bound = paid.bound_msat
    if paid.feasible != (bound == asked.amount_msat) or bound > asked.amount_msat:
        yield (f"feasible is {paid.feasible} but the bound allows {bound} of "
               f"{asked.amount_msat} msat")
    yield from _cheapest_violations(paid)
    elapsed = paid.rounds * scenario.clock.attempt_latency_s
    if abs(paid.elapsed_s - elapsed) > 1e-6 * max(1.0, elapsed):
        yield (f"{paid.elapsed_s} s elapsed, but {paid.rounds} round(s) of "
               f"{scenario.clock.attempt_latency_s} s take {elapsed} s")
    if fees > fee_limit or paid.fee_msat > fee_limit:
        yield f"fees of {max(fees, paid.fee_msat)} msat, over the limit of {fee_limit}"
    # A failed atomic payment releases everything it held: nothing moves.
    released = scenario.atomic_mpp and not paid.success
    want = (0, 0) if released else (amount, fees)
    if (paid.delivered_msat, paid.fee_msat) != want:
        yield (f"books {paid.delivered_msat} msat delivered and {paid.fee_msat} msat fees, "
               f"the log {want[0]} and {want[1]}")


def _cheapest_violations(paid: PaymentResult) -> Iterator[str]:
    """The cheapest plan (docs/scoring.md) is a lower bound: no delivered
    payment pays less, beyond lnd's rounding; an undelivered one has none."""
    if not paid.success:
        if paid.cheapest_fee_msat:
            yield f"undelivered, yet a cheapest plan of {paid.cheapest_fee_msat} msat"
    elif paid.below_cheapest_plan:
        yield (f"paid {paid.fee_msat} msat, below the cheapest plan's "
               f"{paid.cheapest_fee_msat} msat (rounding allows {paid.rounding_allowance})")


def _cltv_ceiling(i: int, scenario: Scenario) -> int:
    """The highest cltv limit payment i can have: the block height when it
    starts, at the latest (every earlier payment running out its attempts,
    one round each, on the virtual clock), plus the limit's delta."""
    rules = scenario.defaults
    longest_payment_s = max((p.attempts(rules) for p in scenario.payments), default=0) * (
        scenario.clock.attempt_latency_s
    )
    latest_start_s = i * (scenario.clock.payment_interval_s + longest_payment_s)
    return scenario.block_height + int(latest_start_s // BLOCK_INTERVAL_S) + rules.cltv_limit_delta
