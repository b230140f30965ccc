"""Prices, the cost ledger, and the user's price file."""

from __future__ import annotations

from pathlib import Path

import pytest

from routesim_evolve.reflect.cost import CostLedger, unpriced_models
from routesim_evolve.reflect.pricing import Price, PricesError, load_prices
from routesim_evolve.reflect.usage import Usage


def test_each_token_kind_has_its_rate_and_cache_rates_default_to_the_usual_multiples():
    price = Price(input=4.0, output=20.0)
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000, cache_write_tokens=1_000_000,
                  cache_write_1h_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert price.cost(usage) == pytest.approx(4 + 20 + 5 + 8 + 0.4)
    explicit = Price(input=4.0, output=20.0, cache_write=5.0, cache_write_1h=8.0, cache_read=0.2)
    assert explicit.cost(Usage(cache_read_tokens=1_000_000)) == pytest.approx(0.2)


@pytest.mark.parametrize(
    "model,priced",
    [("claude-opus-4-5", True), ("claude-opus-4-5-20251101", True), ("gpt-5-2025-08-07", True),
     ("gpt-5.5", False), ("gpt-5-mini", False), ("claude-opus-4-5-preview", False), (None, False)],
)
def test_a_model_takes_its_own_entry_or_its_undated_names(model: str | None, priced: bool):
    assert (load_prices().price(model) is not None) is priced


def test_the_tools_own_figure_wins_and_unknown_prices_are_flagged_not_zero():
    table = load_prices()
    ledger = CostLedger(table)
    ledger.charge("anthropic:claude-opus-4-5", "claude-opus-4-5",
                  Usage(input_tokens=100_000, output_tokens=10_000))
    ledger.charge("claude", None, Usage(output_tokens=5, reported_cost_usd=0.25))
    ledger.charge("openai:gpt-5.5", "gpt-5.5", Usage(output_tokens=1000))
    assert ledger.total_usd == pytest.approx(0.5 + 0.25 + 0.25)
    assert ledger.describe() == "$1.00 + unpriced replies of openai:gpt-5.5"
    assert ledger.replies == 3 and ledger.usage.output_tokens == 11_005
    resumed = CostLedger(table)
    resumed.restore(ledger.snapshot())
    assert resumed.describe() == ledger.describe()
    only_unpriced = CostLedger(table)
    only_unpriced.charge("openai:gpt-5.5", "gpt-5.5", Usage(input_tokens=1200, output_tokens=300))
    assert only_unpriced.describe() == "unpriced replies of openai:gpt-5.5 (1,500 tokens)"
    assert unpriced_models(table, [("a", "gpt-5.5", False), ("b", None, True),
                                   ("c", "gpt-5", False)]) == ["a"]


def test_a_price_file_adds_and_overrides_entries(tmp_path: Path):
    path = tmp_path / "prices.json"
    path.write_text('{"format": "routesim-prices/1", "models": {'
                    '"gpt-5.5": {"input": 5, "output": 30}, "gpt-5": {"input": 1, "output": 2}}}')
    table = load_prices(path)
    assert table.price("gpt-5.5") == Price(input=5, output=30)
    assert table.price("gpt-5") == Price(input=1, output=2)
    assert table.price("claude-opus-4-5") is not None  # the bundled entries stay


@pytest.mark.parametrize(
    "text,message",
    [
        ("{", "not JSON"),
        ('{"format": "routesim-prices/1", "models": {"m": {"input": -1, "output": 2}}}',
         r"field models\.m\.input"),
        ('{"format": "prices/2", "models": {}}', "field format"),
    ],
)
def test_a_broken_price_file_names_the_file_and_field(tmp_path: Path, text: str, message: str):
    path = tmp_path / "prices.json"
    path.write_text(text)
    with pytest.raises(PricesError, match=message) as err:
        load_prices(path)
    assert str(path) in str(err.value)
