"""The four score axes of a router on one scenario, and the combined score.

- success: the share of payments delivered in full. It leads the score: a
  router that saves fees or time by failing payments must never look better.
- retry_efficiency: over delivered payments, 1 / (1 + failed attempts):
  1.0 when no attempt failed, ½ after one failure, whatever the number of
  parts. (Until scoring version 2 it was parts / attempts, which let a router
  dilute a failure by sending more parts than it needed.)
- time_efficiency: over delivered payments, one round's latency over the
  virtual time the payment took (`elapsed_s`): 1 / rounds, 1.0 for a payment
  delivered in its first round (and when the scenario's latency is 0).
- fee_efficiency: over delivered payments, the share of the fee budget above
  the cheapest plan left unspent: 1 − (fee − cheapest) / (limit − cheapest),
  1.0 at the cheapest plan's fee (docs/scoring.md, "The cheapest plan").

The secondary axes count only delivered payments, so each axis measures one
thing; a scenario with no delivered payment scores 0 on all four.

The combined score of a scenario with N payments is

    (delivered + W·retry + W·time + W·fee) / (N + 1),   W = ⅓

Efficiency is worth at most one payment, so one more delivered payment
always counts at least as much as any gain in efficiency: success leads.
The addends are the score's terms (ScoreTerms): what each axis contributes,
so that a distance between two scores splits by axis.
"""

from __future__ import annotations

from pydantic import BaseModel

from routesim_evolve.simulate.result_format import PaymentResult, Result

#: Moves whenever a change here moves any score: evaluations cached and runs
#: begun under another version are not mixed with this one's.
SCORING_VERSION = 3

#: What each secondary axis is worth, in payments, by scoring version: the
#: versions before 3 had no time axis and weighed retry and fee ½ each.
EFFICIENCY_WEIGHTS: dict[int, dict[str, float]] = {
    1: {"retry": 0.5, "time": 0.0, "fee": 0.5},
    2: {"retry": 0.5, "time": 0.0, "fee": 0.5},
    3: {"retry": 1 / 3, "time": 1 / 3, "fee": 1 / 3},
}
#: Today's weight of each secondary axis (the prompts quote it).
EFFICIENCY_WEIGHT = EFFICIENCY_WEIGHTS[SCORING_VERSION]["retry"]

AXES = ("success", "retry_efficiency", "time_efficiency", "fee_efficiency")


class ScoreTerms(BaseModel):
    """The combined score's addends, which sum to it: the delivered payments
    and each weighted efficiency, all over N + 1."""

    success: float = 0.0
    retry: float = 0.0
    time: float = 0.0
    fee: float = 0.0

    @property
    def total(self) -> float:
        return self.success + self.retry + self.time + self.fee


class ScoreAxes(BaseModel):
    """One router's score on one scenario, by axis and combined."""

    success: float
    retry_efficiency: float
    time_efficiency: float = 0.0
    fee_efficiency: float
    payments: int = 0
    #: The scoring version the axes were measured under: evaluations cached
    #: before version 3 lack the field and combine as version 2 did.
    version: int = 2

    @property
    def score(self) -> float:
        return self.terms().total

    def terms(self) -> ScoreTerms:
        """The score split by axis (its addends; they sum to `score`)."""
        if self.payments <= 0:
            return ScoreTerms()
        share = 1 / (self.payments + 1)
        weight = EFFICIENCY_WEIGHTS[self.version]
        return ScoreTerms(success=self.success * self.payments * share,
                          retry=weight["retry"] * self.retry_efficiency * share,
                          time=weight["time"] * self.time_efficiency * share,
                          fee=weight["fee"] * self.fee_efficiency * share)

    def as_dict(self) -> dict[str, float]:
        """The axes by name, as GEPA's per-objective frontier wants them."""
        return {axis: getattr(self, axis) for axis in AXES}


ZERO = ScoreAxes(success=0.0, retry_efficiency=0.0, time_efficiency=0.0,
                 fee_efficiency=0.0, version=SCORING_VERSION)


def score_result(result: Result) -> ScoreAxes:
    """Score one result on the four axes."""
    payments = result.payments
    delivered = [p for p in payments if p.success]
    if not delivered:
        return ZERO

    def mean(axis: list[float]) -> float:
        return sum(axis) / len(delivered)

    return ScoreAxes(
        payments=len(payments),
        success=len(delivered) / len(payments),
        retry_efficiency=mean([_retry_left(p) for p in delivered]),
        time_efficiency=mean([_time_left(p) for p in delivered]),
        fee_efficiency=mean([_fee_left(p) for p in delivered]),
        version=SCORING_VERSION,
    )


def payment_shares(result: Result) -> list[float]:
    """Each payment's share of the score, in the result's order: its
    delivery and its part of the efficiency terms (which average over the
    delivered payments). They sum to `score_result(result).score`, so two
    routers' shares on one scenario (the same payments in the same world)
    pair up payment by payment."""
    payments = result.payments
    delivered = sum(p.success for p in payments)
    if not delivered:
        return [0.0] * len(payments)
    weight = EFFICIENCY_WEIGHTS[SCORING_VERSION]
    share = 1 / (len(payments) + 1)
    return [share * (1 + (weight["retry"] * _retry_left(p) + weight["time"] * _time_left(p)
                          + weight["fee"] * _fee_left(p)) / delivered) if p.success else 0.0
            for p in payments]


def _retry_left(p: PaymentResult) -> float:
    # Failed attempts alone count: the parts that arrived are what the payment
    # needed, so splitting it finer neither hides a failure nor costs one.
    return 1.0 / (1 + max(p.attempts - p.parts, 0))


def _time_left(p: PaymentResult) -> float:
    # One round is as fast as a payment can be: its shards go out together.
    return 1.0 / p.rounds if p.elapsed_s > 0 else 1.0


def _fee_left(p: PaymentResult) -> float:
    # The budget above the cheapest plan: a fee at (or, by rounding, under)
    # the cheapest plan's keeps it all, one at the limit none of it.
    cheapest = min(p.cheapest_fee_msat, p.fee_msat)
    room = p.fee_limit_msat - cheapest
    if room <= 0:
        return 1.0
    return max(0.0, 1.0 - (p.fee_msat - cheapest) / room)
