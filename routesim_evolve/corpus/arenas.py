"""The arenas, once for Python: one record per kind of world a scenario tests.

Everything the harness says or decides about one arena is read from its
record: the name schema.py's `Arena` admits, the scenario fields that switch
it on (the same list as Go's table in go/scenario/arenas.go, compared by
tests/test_arena_registry.py through docs/examples/arenas.json), the
generator's default settings (settings.py), the prompt's paragraph
(reflect/prompts.py) and the row of docs/scenario-format.md's arena table.
A new arena is a record here and a row in Go's table, besides what the
simulator does with it (docs/architecture.md).

This module imports nothing of the corpus package, so that schema.py and
settings.py can both read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from pydantic import BaseModel, ConfigDict, Field


class ArenaSpec(BaseModel):
    """One arena."""

    model_config = ConfigDict(frozen=True)

    name: str
    switch: tuple[str, ...] = Field(
        description="scenario fields (dotted JSON paths) of which one positive value, or "
        "true, switches the arena on; none: always on",
    )
    needs: str = Field(default="", description="the generator's error when it is off")
    defaults: Mapping[str, Any] = Field(
        default_factory=dict,
        description="ArenaSettings fields the arena sets over the common defaults (the "
        "bundled corpus's values)",
    )
    prompt: str = Field(
        default="",
        description="the prompt's paragraph (Jinja, rendered with the pack's context), one "
        "'- ' bullet ending in a newline; empty: none",
    )
    prompt_rates: str | None = Field(
        default=None,
        description="the ArenaRates field its paragraph states, given to templates under "
        "the arena's name",
    )
    doc: str = Field(description="what it plays, in docs/scenario-format.md's arena table")

    def doc_row(self) -> str:
        """Its row of the arena table in docs/scenario-format.md."""
        fields = ", ".join(f"`{f}`" for f in self.switch) or "always on"
        return f"| `{self.name}` | {fields} | {self.doc} |"


_DRIFT_PROMPT: Final = """\
- **Drift.** Background payments of others shift remote balances: about
  {{ drift.events_per_hour|round|int }} shifts an hour across the network \
(median {{ "{:,}".format(drift.median_shift_sat|int) }} sat) while
  the virtual clock runs between payments and attempts. What a router learned about a channel
  goes stale over the scenario.
"""
_ATOMIC_PROMPT: Final = """\
- **Atomic MPP.** In the atomic arena background payments of others move remote balances
  while a payment's shards are held at the receiver: what one round saw may be gone the next,
  and the held shards keep their liquidity and slots until the whole amount arrived.
"""
_ATTRIBUTION_PROMPT: Final = """\
- **Degraded failure reports.** In the attribution arena some failure reports are wrong:
  the blamed position can be off by one hop, or the report unreadable{% if degraded %} (the
  addendum below gives the rates and what to do){% endif %}.
"""

#: The arenas in their canonical order: corpora, manifests and prompts list
#: them in this order.
ARENA_TABLE: Final[tuple[ArenaSpec, ...]] = (
    ArenaSpec(
        name="base", switch=(),
        doc="hidden liquidity, stale gossip and the payment loop every arena plays",
    ),
    ArenaSpec(
        name="drift", switch=("traffic.events_per_hour",), needs="events_per_hour > 0",
        defaults={"events_per_hour": 1200.0, "median_shift_sat": 200_000.0},
        prompt=_DRIFT_PROMPT, prompt_rates="drift",
        doc="background payments of others shift remote balances as the virtual clock runs",
    ),
    ArenaSpec(
        name="atomic_mpp", switch=("atomic_mpp",), needs="atomic_mpp true",
        # Held shards meet traffic while the payment runs: a shift a second
        # and 3-s rounds (40 of them stay within lnd's 120-s MPP timeout).
        defaults={"atomic_mpp": True, "events_per_hour": 3600.0, "median_shift_sat": 100_000.0,
                  "attempt_latency_s": 3.0},
        prompt=_ATOMIC_PROMPT,
        doc="shards are held at the receiver until the whole amount arrived, else all released "
        "(every arena's default, as real receivers do); here background traffic moves while "
        "they are held (a shift a second, 3-s rounds)",
    ),
    ArenaSpec(
        name="attribution",
        switch=("attribution.stripped_rate", "attribution.shift_before_rate",
                "attribution.shift_after_rate"),
        needs="a positive attribution rate",
        defaults={"attribution": {"stripped_rate": 0.1, "shift_before_rate": 0.05,
                                  "shift_after_rate": 0.05}},
        prompt=_ATTRIBUTION_PROMPT, prompt_rates="attribution",
        doc="some failure reports arrive unreadable or blame a neighbour of the failing node",
    ),
)
ARENA_NAMES: Final[tuple[str, ...]] = tuple(a.name for a in ARENA_TABLE)
_BY_NAME: Final[dict[str, ArenaSpec]] = {a.name: a for a in ARENA_TABLE}


def arena_spec(name: str) -> ArenaSpec:
    """The record of a known arena (KeyError for another name)."""
    return _BY_NAME[name]


def in_order(names: Iterable[str]) -> list[ArenaSpec]:
    """The records of these arenas, in the canonical order."""
    chosen = set(names)
    return [a for a in ARENA_TABLE if a.name in chosen]


def switched_on(spec: ArenaSpec, scenario: Mapping[str, Any]) -> bool:
    """Whether a scenario (as JSON data) switches the arena on: Go's rule,
    read from the same fields."""
    return not spec.switch or any(_at(scenario, path) > 0 for path in spec.switch)


def _at(data: Mapping[str, Any], path: str) -> Any:
    value: Any = data
    for key in path.split("."):
        value = value[key]
    return value
