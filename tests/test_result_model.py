"""The Python result model reads what routesim writes."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from pydantic import ValidationError

from routesim_evolve.simulate.result_format import Result

EXAMPLE = Path(__file__).resolve().parents[1] / "docs" / "examples" / "result-example.json"


def example() -> dict[str, object]:
    doc = orjson.loads(EXAMPLE.read_bytes())
    assert isinstance(doc, dict)
    return doc


def test_example_parses() -> None:
    result = Result.model_validate_json(EXAMPLE.read_bytes())
    assert result.format == "routesim-result/1"
    assert result.arena == "attribution" and result.router == "candidate"
    assert result.totals.payments == len(result.payments) == 12
    assert result.totals.succeeded == sum(p.success for p in result.payments)
    assert result.totals.attempts == sum(p.attempts for p in result.payments)
    assert result.totals.feasible == sum(p.feasible for p in result.payments) == 11
    assert all(p.feasible for p in result.payments if p.success)
    assert result.totals.degraded == {"stripped": 1}


def test_optional_fields_follow_go_omitempty() -> None:
    result = Result.model_validate_json(EXAMPLE.read_bytes())
    first = result.payments[0]
    assert first.error is None and first.failures == {}
    assert first.attempt_log[0].reported is None and first.attempt_log[0].fail_idx == -1
    failed = next(p for p in result.payments if not p.success)
    assert failed.failure_reason != "" and failed.error
    failures = [a for p in result.payments for a in p.attempt_log if a.fail_idx >= 0]
    assert failures and all(a.degraded is not None for a in failures)


def test_round_trip() -> None:
    result = Result.model_validate_json(EXAMPLE.read_bytes())
    assert Result.model_validate_json(result.model_dump_json()) == result


def test_unknown_field_is_an_error() -> None:
    doc = example()
    doc["extra"] = 1
    with pytest.raises(ValidationError):
        Result.model_validate(doc)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("format",), "routesim-result/2"),
        (("arena",), "moon"),
        (("totals", "success_rate"), 1.5),
        (("totals", "fee_msat"), -1),
        (("payments", 0, "failure_reason"), "gave_up"),
        (("payments", 0, "attempt_log", 0, "degraded"), "mangled"),
    ],
)
def test_bad_values_are_errors(path: tuple[str | int, ...], value: object) -> None:
    doc = example()
    node: object = doc
    for step in path[:-1]:
        node = node[step]  # type: ignore[index]
    node[path[-1]] = value  # type: ignore[index]
    with pytest.raises(ValidationError):
        Result.model_validate(doc)
