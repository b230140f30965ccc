"""The run's cost ledger: every reply's usage, priced, summed.

Back-ends report each reply here (`charge`); the run log records each
charge, the progress line and the report show the total, and `--max-cost`
stops the run when the total reaches it. A reply whose model has no price
(and whose tool reports none) is counted in tokens and flagged, never
priced at $0.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from routesim_evolve.reflect.pricing import PriceTable
from routesim_evolve.reflect.usage import Usage


class Charge(BaseModel):
    """One reply: who answered, its tokens, and its price (None: unknown)."""

    model_config = ConfigDict(frozen=True)

    backend: str
    model: str | None
    usage: Usage
    cost_usd: float | None


class CostLedger:
    """Prices and sums every reply of a run: each back-end charges it
    (its `meter`) with the usage of every reply."""

    def __init__(
        self, prices: PriceTable, *, on_charge: Callable[[Charge], None] | None = None
    ) -> None:
        self.prices = prices
        self.on_charge = on_charge
        self._lock = threading.Lock()
        self.total_usd = 0.0
        self.usage = Usage()
        self.replies = 0
        self.priced_replies = 0
        self.unpriced: set[str] = set()  # back-ends whose replies had no price

    def charge(self, backend: str, model: str | None, usage: Usage) -> None:
        cost = self.prices.cost(model, usage)
        entry = Charge(backend=backend, model=model, usage=usage, cost_usd=cost)
        with self._lock:
            self.replies += 1
            self.usage += usage
            if cost is None:
                self.unpriced.add(backend)
            else:
                self.priced_replies += 1
                self.total_usd += cost
        if self.on_charge is not None:
            self.on_charge(entry)

    def describe(self) -> str:
        """The total for a progress line or report: `$1.23`, with what is
        not included."""
        if self.replies == 0:
            return "$0.00 (no LM replies)"
        unpriced = f"unpriced replies of {', '.join(sorted(self.unpriced))}"
        if self.priced_replies == 0:
            # Never "$0.00": the price is unknown, the tokens are not.
            return f"{unpriced} ({self.usage.total_tokens:,} tokens)"
        return f"${self.total_usd:.2f}" + (f" + {unpriced}" if self.unpriced else "")

    def snapshot(self) -> dict[str, Any]:
        """Plain data for resume.pkl, so a resumed run keeps counting."""
        return {"total_usd": self.total_usd, "usage": self.usage.model_dump(),
                "replies": self.replies, "priced_replies": self.priced_replies,
                "unpriced": sorted(self.unpriced)}

    def restore(self, snapshot: dict[str, Any]) -> None:
        self.total_usd = snapshot["total_usd"]
        self.usage = Usage.model_validate(snapshot["usage"])
        self.replies = snapshot["replies"]
        self.priced_replies = snapshot["priced_replies"]
        self.unpriced = set(snapshot["unpriced"])


def unpriced_models(
    prices: PriceTable, backends: list[tuple[str, str | None, bool]]
) -> list[str]:
    """Back-ends `(name, model, reports_own_cost)` whose cost `--max-cost`
    could not see: no price for the model and no figure from the tool."""
    return [
        name for name, model, reports in backends
        if not reports and prices.price(model) is None
    ]
