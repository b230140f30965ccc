"""Dollars from tokens: a price table per model, overridable by the user.

The bundled table (prices.json, dated) covers the common models; a user
adds or corrects entries with `--prices FILE` in the same format. A model
with no entry has an unknown cost, which is shown as such, never as $0;
`--max-cost` refuses to start with such a model unless its tool reports
its own cost.
"""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from routesim_evolve.reflect.usage import Usage

PER_MILLION = 1_000_000.0
# A snapshot date at the end of a model id.
_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")


class Price(BaseModel):
    """USD per million tokens. Unset cache rates follow the usual multiples
    of the input rate."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    cache_write_1h: float | None = Field(default=None, ge=0)
    cache_read: float | None = Field(default=None, ge=0)

    def cost(self, usage: Usage) -> float:
        """What `usage` costs at these rates."""
        write = self.cache_write if self.cache_write is not None else 1.25 * self.input
        write_1h = self.cache_write_1h if self.cache_write_1h is not None else 2.0 * self.input
        read = self.cache_read if self.cache_read is not None else 0.1 * self.input
        total = (
            usage.input_tokens * self.input
            + usage.output_tokens * self.output
            + usage.cache_write_tokens * write
            + usage.cache_write_1h_tokens * write_1h
            + usage.cache_read_tokens * read
        )
        return total / PER_MILLION


class PriceTable(BaseModel):
    """prices.json, or a user's file in the same format."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: str = Field(pattern=r"^routesim-prices/1$")
    as_of: str = ""
    comment: str = ""
    models: dict[str, Price]

    def price(self, model: str | None) -> Price | None:
        """The entry of `model`, or of its undated name for a dated snapshot
        (`claude-opus-4-5-20251101`, `gpt-5-2025-08-07`). Nothing looser:
        `gpt-5` is not the price of `gpt-5.5` or `gpt-5-mini`."""
        if not model:
            return None
        base = _DATED.sub("", model)
        return self.models.get(model) or self.models.get(base)

    def cost(self, model: str | None, usage: Usage) -> float | None:
        """The tool's own figure when it gave one, else ours, else None."""
        if usage.reported_cost_usd is not None:
            return usage.reported_cost_usd
        price = self.price(model)
        return None if price is None else price.cost(usage)

    def merged(self, other: PriceTable) -> PriceTable:
        """This table with `other`'s entries added or replacing ours."""
        return self.model_copy(update={"models": {**self.models, **other.models}})


class PricesError(ValueError):
    """A --prices file that cannot be used; the message names the file."""


def bundled_prices() -> PriceTable:
    text = resources.files("routesim_evolve.reflect").joinpath("prices.json").read_bytes()
    return PriceTable.model_validate(orjson.loads(text))


def load_prices(override: Path | None = None) -> PriceTable:
    """The bundled table, with `override`'s entries on top."""
    table = bundled_prices()
    if override is None:
        return table
    try:
        user = PriceTable.model_validate(orjson.loads(override.read_bytes()))
    except OSError as err:
        raise PricesError(f"{override}: cannot read: {err.strerror}") from None
    except orjson.JSONDecodeError as err:
        raise PricesError(f"{override}: not JSON: {err}") from None
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise PricesError(
            f"{override}: field {where}: {first['msg']} (see docs/llm.md, 'Prices')"
        ) from None
    return table.merged(user)
