"""The three score axes of a router on one scenario, and the combined score.

- success: the share of payments delivered in full. It leads the score: a
  router that saves fees by failing payments must never look better.
- retry_efficiency: over delivered payments, 1 / (1 + failed attempts):
  1.0 when no attempt failed, ½ after one failure, whatever the number of
  parts. (Until scoring version 2 it was parts / attempts, which let a router
  dilute a failure by sending more parts than it needed.)
- fee_efficiency: over delivered payments, the share of the fee budget left
  unspent (1 − fee / fee limit).

Both secondary axes count only delivered payments, so each axis measures one
thing; a scenario with no delivered payment scores 0 on all three.

The combined score of a scenario with N payments is

    (delivered + EFFICIENCY_WEIGHT·retry + EFFICIENCY_WEIGHT·fee) / (N + 1)

Efficiency is worth at most one payment, so one more delivered payment
always counts at least as much as any gain in efficiency: success leads.
The three addends are the score's terms (ScoreTerms): what each axis
contributes, so that a distance between two scores splits by axis.
"""

from __future__ import annotations

from pydantic import BaseModel

from routesim_evolve.simulate.result import Result

# Each secondary axis is worth at most half a payment.
EFFICIENCY_WEIGHT = 0.5

#: Moves whenever a change here moves any score: evaluations cached and runs
#: begun under another version are not mixed with this one's.
SCORING_VERSION = 2

AXES = ("success", "retry_efficiency", "fee_efficiency")


class ScoreTerms(BaseModel):
    """The combined score's three addends, which sum to it: the delivered
    payments, the weighted retry efficiency and the weighted fee efficiency,
    each over N + 1."""

    success: float = 0.0
    retry: float = 0.0
    fee: float = 0.0


class ScoreAxes(BaseModel):
    """One router's score on one scenario, by axis and combined."""

    success: float
    retry_efficiency: float
    fee_efficiency: float
    payments: int = 0

    @property
    def score(self) -> float:
        terms = self.terms()
        return terms.success + terms.retry + terms.fee

    def terms(self) -> ScoreTerms:
        """The score split by axis (its addends; they sum to `score`)."""
        if self.payments <= 0:
            return ScoreTerms()
        share = 1 / (self.payments + 1)
        return ScoreTerms(success=self.success * self.payments * share,
                          retry=EFFICIENCY_WEIGHT * self.retry_efficiency * share,
                          fee=EFFICIENCY_WEIGHT * self.fee_efficiency * share)

    def as_dict(self) -> dict[str, float]:
        """The axes by name, as GEPA's per-objective frontier wants them."""
        return {axis: getattr(self, axis) for axis in AXES}


ZERO = ScoreAxes(success=0.0, retry_efficiency=0.0, fee_efficiency=0.0)


def score_result(result: Result) -> ScoreAxes:
    """Score one result on the three axes."""
    payments = result.payments
    if not payments:
        return ZERO
    delivered = [p for p in payments if p.success]
    if not delivered:
        return ZERO
    retry = sum(_retry_left(p.attempts, p.parts) for p in delivered) / len(delivered)
    fee = sum(_fee_left(p.fee_msat, p.fee_limit_msat) for p in delivered) / len(delivered)
    return ScoreAxes(
        payments=len(payments),
        success=len(delivered) / len(payments),
        retry_efficiency=retry,
        fee_efficiency=fee,
    )


def _retry_left(attempts: int, parts: int) -> float:
    # Failed attempts alone count: the parts that arrived are what the payment
    # needed, so splitting it finer neither hides a failure nor costs one.
    return 1.0 / (1 + max(attempts - parts, 0))


def _fee_left(fee_msat: int, limit_msat: int) -> float:
    if limit_msat <= 0:
        return 1.0 if fee_msat == 0 else 0.0
    return max(0.0, 1.0 - fee_msat / limit_msat)
