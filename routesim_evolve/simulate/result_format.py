"""The result format `routesim-result/1` (docs/result-format.md), as written
by `routesim` (Go type sim.Result). Unknown fields are errors, so a change on
the Go side that is not mirrored here fails loudly in the tests."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, NonNegativeInt

from routesim_evolve.corpus.schema import Arena, Rules

RESULT_FORMAT = "routesim-result/1"

FailureReason = Literal[
    "", "router_gave_up", "attempts_exhausted", "invalid_route", "router_init_failed",
    "incorrect_payment_details", "parts_exhausted"
]
Degradation = Literal["none", "stripped", "shift_before", "shift_after"]


class _Strict(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AttemptRecord(_Strict):
    """One attempt: what was sent, what really happened, what the sender was
    told."""

    amount_msat: NonNegativeInt
    fee_msat: NonNegativeInt
    hops: NonNegativeInt
    #: The route's total time lock (expiry on the sender's channel).
    time_lock: NonNegativeInt
    #: "settled", "held" (atomic: arrived and held) or the true failure code.
    outcome: str
    #: True failing position (0 the sender, i+1 for Hops[i]); -1 if it arrived.
    fail_idx: int = Field(ge=-1)
    #: The position the sender was told; -1 off the route.
    reported_idx: int = Field(ge=-1)
    #: The code the sender was told ("unreadable" when stripped); failures only.
    reported: str | None = None
    degraded: Degradation | None = None
    round: NonNegativeInt
    #: The router's name for the branch that chose the route (Go's
    #: routing.RouteLabeler); empty when it gives none.
    label: str = Field(default="", max_length=32, pattern=r"^[A-Za-z0-9._:/-]*$")


class PaymentResult(_Strict):
    """The outcome of one payment."""

    index: NonNegativeInt
    target: str
    amount_msat: NonNegativeInt
    delivered_msat: NonNegativeInt
    success: bool
    #: False when no router could have delivered the payment in the world
    #: it met (docs/scoring.md, "The feasible bound").
    feasible: bool
    #: How much of the amount the feasible bound allows.
    bound_msat: NonNegativeInt
    attempts: NonNegativeInt
    parts: NonNegativeInt
    fee_msat: NonNegativeInt
    fee_limit_msat: NonNegativeInt
    #: For a delivered payment, a lower bound on the fee any router could
    #: have paid for it (docs/scoring.md, "The cheapest plan"); 0 otherwise,
    #: and in results written before scoring version 3.
    cheapest_fee_msat: NonNegativeInt = 0
    #: Virtual seconds from the first attempt to the end: the payment's
    #: rounds times the attempt latency (0 in results before version 3).
    elapsed_s: float = Field(default=0.0, ge=0)
    failure_reason: FailureReason
    error: str | None = None
    router_ns: NonNegativeInt
    failures: dict[str, NonNegativeInt] = Field(default_factory=dict)
    attempt_log: tuple[AttemptRecord, ...]

    @property
    def rounds(self) -> int:
        """The rounds the payment dispatched shards in."""
        return 1 + max(a.round for a in self.attempt_log) if self.attempt_log else 0

    @property
    def rounding_allowance(self) -> int:
        """How far below cheapest_fee_msat the fee may lie: lnd rounds each
        hop's proportional fee down to the msat, so each hop after the
        sender's own of each arrived part may pay under 1 msat less than the
        cheapest plan counts (Go: PaymentResult.RoundingAllowance)."""
        return sum(a.hops - 1 for a in self.attempt_log
                   if a.fail_idx < 0 and a.hops > 1)

    @property
    def below_cheapest_plan(self) -> bool:
        """Delivered for less than its cheapest plan, beyond lnd's rounding:
        what no honest result shows (a broken fee bound)."""
        return self.success and self.fee_msat + self.rounding_allowance < self.cheapest_fee_msat


class Totals(_Strict):
    """The payments of a result, summed."""

    payments: NonNegativeInt
    succeeded: NonNegativeInt
    #: Payments the feasible bound allows.
    feasible: NonNegativeInt
    success_rate: float = Field(ge=0, le=1)
    attempts: NonNegativeInt
    attempts_per_payment: float = Field(ge=0)
    amount_msat: NonNegativeInt
    delivered_msat: NonNegativeInt
    fee_msat: NonNegativeInt
    #: Fees over amount of the successful payments, in ppm.
    fee_ppm: float = Field(ge=0)
    #: Wall time inside the router and the rest of the run; 0 with --no-timing.
    router_ns: NonNegativeInt
    sim_ns: NonNegativeInt
    degraded: dict[str, NonNegativeInt] = Field(default_factory=dict)


class Result(_Strict):
    """What one router did on one scenario."""

    format: Literal["routesim-result/1"]
    scenario: str
    arena: Arena
    router: str
    seed: NonNegativeInt
    rules: Rules | None = Field(
        default=None, description="the rules real nodes enforce that the world played; "
        "absent: none")
    totals: Totals
    payments: tuple[PaymentResult, ...]
