"""The reference routers, one record each: the one place Python names them.

The routesim binary registers the same names on the Go side
(go/cmd/internal/routesimcmd/routers_reference.go), and a test checks that the two
lists agree. Every reader takes what it needs from these records: the
reference cache and the evaluator which routers run and which bridge process
a router needs built, the sandbox the option that hands routesim the bridge,
the report each router's colour, which routers headroom and the verdict
measure against, and which router is the ceiling, the feedback the name of a
router's production stack. A new reference router in Python is one line of
REFERENCE_ROUTERS.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from routesim_evolve.build import ldk


class Role(enum.StrEnum):
    """What a reference router is in the comparisons."""

    #: A router a real node runs: paired with every candidate, named in the
    #: proposers' feedback, and a row in every table.
    PRODUCTION = "production"
    #: The clairvoyant ceiling: a row in the tables, the distance every
    #: router is measured from; it forms no pair and a proposer hears of it
    #: only as the ceiling.
    CEILING = "ceiling"


class Bridge(BaseModel):
    """A second process a reference router runs beside routesim (LDK's
    router runs in Rust): how its binary is built and handed to routesim."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    #: routesim's flag that names the bridge binary.
    option: str
    #: The bridge binary, built on first use, checked by content.
    binary: Callable[[], Path]
    #: The content key of its sources: part of its cached results' keys, so
    #: that editing the bridge runs its references again.
    key: Callable[[], str]
    #: What a heartbeat says while it builds.
    building: str

    def cache_salt(self) -> str:
        """What a reference result's key adds for this bridge."""
        return f",{self.option.removeprefix('--')}:{self.key()}"


class ReferenceRouter(BaseModel):
    """One reference router: its name as routesim's --router takes it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    #: The production stack it is a router of (feedback names the stack;
    #: the verdict takes the better router of each stack).
    stack: str
    role: Role
    #: Its colour on every page and figure of the report.
    colour: str
    #: None when it runs inside the routesim process (linked in).
    bridge: Bridge | None = None


LDK_BRIDGE = Bridge(
    option="--ldk-bridge", binary=ldk.bridge_binary, key=ldk.bridge_key,
    building="LDK's bridge (rust-lightning; the first run on a machine compiles it once, "
             "for a few minutes)")

#: Every reference router, in the order of the tables' rows.
REFERENCE_ROUTERS = (
    ReferenceRouter(name="lnd-apriori", stack="lnd", role=Role.PRODUCTION, colour="#2ca02c"),
    ReferenceRouter(name="lnd-bimodal", stack="lnd", role=Role.PRODUCTION, colour="#d62728"),
    ReferenceRouter(name="ldk", stack="LDK", role=Role.PRODUCTION, colour="#843c39",
                    bridge=LDK_BRIDGE),
    ReferenceRouter(name="oracle", stack="oracle", role=Role.CEILING, colour="#7f7f7f"),
)

_BY_NAME = {r.name: r for r in REFERENCE_ROUTERS}

#: Their names, as routesim's --router takes them.
REFERENCE_NAMES = tuple(_BY_NAME)

#: The stack whose better router headroom captured is measured from
#: (docs/scoring.md).
HEADROOM_STACK = "lnd"

#: The production routers every candidate is compared with, in row order.
PRODUCTION_ROUTERS = tuple(r.name for r in REFERENCE_ROUTERS if r.role is Role.PRODUCTION)

#: The routers of the headroom's stack: lnd's.
LND_ROUTERS = tuple(r.name for r in REFERENCE_ROUTERS if r.stack == HEADROOM_STACK)

#: The clairvoyant ceiling: the one CEILING router.
(ORACLE,) = (r.name for r in REFERENCE_ROUTERS if r.role is Role.CEILING)


def bridge_of(name: str) -> Bridge | None:
    """The bridge a router runs; None for one run in process, or no
    reference router at all (a candidate)."""
    router = _BY_NAME.get(name)
    return router.bridge if router is not None else None


def stack_of(name: str) -> str:
    """The production stack a router belongs to (lnd, LDK), else its name."""
    router = _BY_NAME.get(name)
    return router.stack if router is not None else name


def production_stacks() -> dict[str, tuple[str, ...]]:
    """Each production stack's routers, stacks and routers in row order."""
    stacks: dict[str, tuple[str, ...]] = {}
    for name in PRODUCTION_ROUTERS:
        stacks[stack_of(name)] = (*stacks.get(stack_of(name), ()), name)
    return stacks


def reference_colours() -> dict[str, str]:
    """Each reference router's colour, in row order."""
    return {r.name: r.colour for r in REFERENCE_ROUTERS}


def in_words(names: Sequence[str]) -> str:
    """Names as a sentence lists them: "a, b and c"."""
    return " and ".join(filter(None, (", ".join(names[:-1]), *names[-1:])))
