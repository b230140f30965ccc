"""The acceptance and confirmation rules by name: the one place the driver,
the benchmarks and the CLI get a concrete rule from (rules.py says what a
rule must do). A new rule is its module, a line here and its test.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TypeVar

import orjson

from routesim_evolve.evolve.acceptance import PairedAcceptance
from routesim_evolve.evolve.confirm import confirm_best
from routesim_evolve.evolve.rules import AcceptanceRule, ConfirmationRule
from routesim_evolve.evolve.sequential import SequentialAcceptance
from routesim_evolve.evolve.sum_rises import SumRises

#: Each acceptance rule's constructor, by name; its keyword options (the
#: paired rule's `threshold` and `majority`, the sequential rule's
#: SequentialTest fields) pass through `acceptance_rule`.
ACCEPTANCE_RULES: dict[str, Callable[..., AcceptanceRule]] = {
    "paired": PairedAcceptance,
    "sequential": SequentialAcceptance,
    "sum-rises": SumRises,
}
CONFIRMATION_RULES: dict[str, ConfirmationRule] = {
    "reseeded": confirm_best,
}
#: The run's rules, measured in docs/search.md: the sequential acceptance
#: kept no more of the children that are not better than the paired rule did
#: and twice as many of those gaining +0.01 or more, for a main job about a
#: tenth longer.
DEFAULT_ACCEPTANCE = "sequential"
DEFAULT_CONFIRMATION = "reseeded"
#: The rule a run dir begun before settings.json named its rule was judged
#: by: the default then.
UNNAMED_ACCEPTANCE = "paired"

Rule = TypeVar("Rule")


def acceptance_rule(name: str | None = None, **options: float | bool) -> AcceptanceRule:
    """A fresh acceptance rule (it keeps its account of the last proposal,
    so one per run): `name`'s, or the run's."""
    return _named(ACCEPTANCE_RULES, name or DEFAULT_ACCEPTANCE, "acceptance")(**options)


def run_acceptance(run_dir: Path, asked: str | None) -> str:
    """The acceptance rule a run uses, by name: the one asked for; else, in
    a run dir begun before (its settings.json), the one it began with, so a
    resume is judged as it began even after the default changed; else the
    default."""
    if asked:
        return asked
    try:
        began = orjson.loads((run_dir / "settings.json").read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return DEFAULT_ACCEPTANCE
    named = began.get("acceptance") if isinstance(began, dict) else None
    return named if isinstance(named, str) and named in ACCEPTANCE_RULES else UNNAMED_ACCEPTANCE


def rule_name(rule: AcceptanceRule) -> str | None:
    """The registry's name of a rule's kind; None for one it does not hold."""
    return next((name for name, make in ACCEPTANCE_RULES.items() if type(rule) is make), None)


def confirmation_rule(name: str | None = None) -> ConfirmationRule:
    """The confirmation rule `name`, or the run's."""
    return _named(CONFIRMATION_RULES, name or DEFAULT_CONFIRMATION, "confirmation")


def _named(rules: Mapping[str, Rule], name: str, kind: str) -> Rule:
    if name not in rules:
        raise ValueError(f"no {kind} rule {name!r}; the rules are {', '.join(rules)}")
    return rules[name]
