"""Success, attempts and fees by payment size: every router's payments in
decade buckets of the amount (1k–10k sat, 10k–100k sat, …)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from routesim_evolve.simulate.result_format import PaymentResult


class SizeBucket(BaseModel):
    """One router's payments whose amount falls in [low_sat, high_sat)."""

    router: str
    low_sat: int
    high_sat: int
    payments: int
    success: float
    attempts_per_payment: float
    #: Fees over amount of the delivered payments, in ppm; None if none was delivered.
    fee_ppm: float | None

    @property
    def label(self) -> str:
        return f"{_short(self.low_sat)}–{_short(self.high_sat)} sat"


def size_buckets(payments: Mapping[str, Sequence[PaymentResult]]) -> list[SizeBucket]:
    """Every router's payments grouped in decade buckets of the amount in
    sat; the buckets are those any router's payments fall in."""
    decades = sorted({_decade(p.amount_msat) for ps in payments.values() for p in ps})
    out = []
    for decade in decades:
        for router, ps in payments.items():
            inside = [p for p in ps if _decade(p.amount_msat) == decade]
            if not inside:
                continue
            delivered = [p for p in inside if p.success]
            amount = sum(p.amount_msat for p in delivered)
            out.append(SizeBucket(
                router=router,
                low_sat=10**decade if decade > 0 else 0,
                high_sat=10 ** (decade + 1),
                payments=len(inside),
                success=len(delivered) / len(inside),
                attempts_per_payment=sum(p.attempts for p in inside) / len(inside),
                fee_ppm=1e6 * sum(p.fee_msat for p in delivered) / amount if amount else None,
            ))
    return out


def _decade(amount_msat: int) -> int:
    sat = amount_msat / 1000
    return max(0, math.floor(math.log10(sat))) if sat >= 1 else 0


def _short(sat: int) -> str:
    for unit, size in (("M", 10**6), ("k", 10**3)):
        if sat >= size:
            return f"{sat // size}{unit}"
    return str(sat)
