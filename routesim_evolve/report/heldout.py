"""Held-out comparisons as Markdown: the per-arena table with delivered of
feasible and the headroom captured against the feasible bound, the distance
to the oracle by score axis, the paired statistics, the per-scenario lines
and the sanity check (score/compare.py computes them)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence

from pydantic import BaseModel

from routesim_evolve.corpus.examples import original_name
from routesim_evolve.score.axes import ScoreTerms
from routesim_evolve.score.compare import Comparison, RouterScore
from routesim_evolve.score.stats import (
    PairedComparison,
    delivered_of_feasible,
    headroom_captured,
    headroom_interval,
)
from routesim_evolve.simulate.routers import (
    LND_ROUTERS,
    ORACLE,
    REFERENCE_NAMES,
    production_stacks,
)

#: The score's terms, in the order the distance table shows them.
TERMS = tuple(ScoreTerms.model_fields)


def sanity_flags(comparison: Comparison) -> list[str]:
    """Scenarios where one router delivers nothing while another delivers
    something: a comparison there is suspect (an unfair world, a broken
    reference) until explained. Each flag names every router's reason. Also
    every router that delivered a payment the feasible bound ruled out, or
    paid less than a payment's cheapest plan: a bound some router beats is a
    bug."""
    by_scenario: dict[str, list[RouterScore]] = defaultdict(list)
    for s in comparison.scores:
        by_scenario[s.scenario].append(s)
    flags = []
    for scenario in sorted(by_scenario):
        rows = by_scenario[scenario]
        flags += [f"{scenario}: {r.router} delivered {r.beyond_bound} payment(s) the feasible "
                  "bound says no router could" for r in rows if r.beyond_bound]
        flags += [f"{scenario}: {r.router} paid less than the cheapest plan on "
                  f"{r.below_cheapest} payment(s)" for r in rows if r.below_cheapest]
        if any(r.delivered == 0 for r in rows) and any(r.delivered > 0 for r in rows):
            said = "; ".join(
                f"{r.router} delivered {r.delivered}" + (f" ({r.reason})" if r.reason else "")
                for r in rows
            )
            flags.append(f"{scenario}: {said}")
    return flags


def render_sanity(comparison: Comparison) -> str:
    """The sanity check as Markdown: a line saying all is well, or the flags."""
    flags = sanity_flags(comparison)
    if not flags:
        return ("Sanity check: no scenario where one router delivers nothing and another "
                "something, no payment delivered beyond the feasible bound and none paid "
                "below the cheapest plan.")
    return "\n".join([
        f"**Sanity check: {len(flags)} flag(s): a router delivered nothing where another "
        "delivered something, or beyond the feasible bound, or paid below the cheapest "
        "plan** (check that every router sees the same world, and the bounds):",
        *(f"- {f}" for f in flags),
    ])


class ArenaRow(BaseModel):
    """One router's means over the scenarios of one arena (or "all")."""

    arena: str
    router: str
    scenarios: int
    success: float
    attempts_per_payment: float
    fee_ppm: float
    score: float
    #: Payments delivered and payments feasible (the feasible bound, in this
    #: router's own world), summed over the scenarios; feasible is None when
    #: a scenario's result predates the bound.
    delivered: int = 0
    feasible: int | None = None
    #: The share of lnd's distance to the feasible bound this router closes,
    #: on delivered of feasible (score/stats.headroom_captured); never over
    #: 100 %. None for lnd's routers or without an lnd row.
    headroom: float | None = None
    #: True when lnd already delivers every feasible payment: no gap to close.
    no_gap: bool = False
    #: The 95 % bootstrap interval of `headroom`, resampling whole scenarios
    #: (each with its reseeded copies); None with fewer than two scenarios.
    headroom_low: float | None = None
    headroom_high: float | None = None

    @property
    def of_feasible(self) -> float | None:
        """Delivered of feasible: the share of the feasible payments delivered."""
        return None if self.feasible is None else delivered_of_feasible(self.delivered,
                                                                         self.feasible)

    def of_feasible_text(self) -> str:
        share = self.of_feasible
        return "—" if share is None else f"{100 * share:.1f} %"

    def headroom_text(self) -> str:
        if self.no_gap:
            return "— (no gap)"
        if self.headroom is None:
            return ""
        text = f"{100 * self.headroom:+.0f} %"
        if self.headroom_low is not None and self.headroom_high is not None:
            text += f" [{100 * self.headroom_low:+.0f}, {100 * self.headroom_high:+.0f}]"
        return text


def by_arena(
    comparison: Comparison,
) -> Iterator[tuple[str, list[tuple[str, list[RouterScore]]]]]:
    """Each arena in name order, then "all", with each router's scenarios
    there (routers in the comparison's order; one without any is left out)."""
    by_router = comparison.by_router()
    for arena in [*sorted({s.arena for s in comparison.scores}), "all"]:
        groups = [(router, [s for s in by_router[router] if arena in ("all", s.arena)])
                  for router in comparison.routers]
        yield arena, [(router, scored) for router, scored in groups if scored]


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def arena_rows(comparison: Comparison) -> list[ArenaRow]:
    """Every router's means per arena, then over all scenarios ("all").
    For each router but lnd's, `headroom` is
    (router − better lnd) / (1 − better lnd) on delivered of feasible."""
    by_router = comparison.by_router()
    rows: list[ArenaRow] = []
    for arena, groups in by_arena(comparison):
        in_arena: list[ArenaRow] = []
        for router, scored in groups:
            n = len(scored)
            feasible = [s.feasible for s in scored]
            in_arena.append(ArenaRow(
                arena=arena, router=router, scenarios=n,
                success=sum(r.success for r in scored) / n,
                attempts_per_payment=sum(r.attempts_per_payment for r in scored) / n,
                fee_ppm=sum(r.fee_ppm for r in scored) / n,
                score=sum(r.score for r in scored) / n,
                delivered=sum(r.delivered for r in scored),
                feasible=None if None in feasible else sum(f or 0 for f in feasible),
            ))
        _fill_headroom(in_arena, by_router, arena)
        rows += in_arena
    return rows


def _fill_headroom(rows: Sequence[ArenaRow], by_router: Mapping[str, Sequence[RouterScore]],
                   arena: str) -> None:
    """Each non-lnd row's headroom captured against the better lnd row of
    the arena, with its interval over the samples every router ran."""
    lnd = [r.of_feasible for r in rows if r.router in LND_ROUTERS]
    if not lnd or None in lnd:
        return
    better = max(s for s in lnd if s is not None)
    for row in rows:
        mine = row.of_feasible
        if row.router in LND_ROUTERS or mine is None:
            continue
        row.headroom = headroom_captured(mine, better)
        row.no_gap = row.headroom is None
        if row.headroom is not None:
            interval = _headroom_interval(row.router, by_router, arena)
            row.headroom_low, row.headroom_high = interval or (None, None)


def render_table(comparison: Comparison) -> str:
    """Per-arena table of every router (arena_rows), as Markdown."""
    lines = ["| arena | router | scenarios | success | delivered / feasible | of feasible | "
             "attempts/payment | fee ppm | score | headroom captured |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in arena_rows(comparison):
        feasible = "—" if r.feasible is None else str(r.feasible)
        lines.append(
            f"| {r.arena} | {r.router} | {r.scenarios} | {r.success:.3f} | "
            f"{r.delivered} / {feasible} | {r.of_feasible_text()} | "
            f"{r.attempts_per_payment:.2f} | {r.fee_ppm:.0f} | {r.score:.4f} | "
            f"{r.headroom_text()} |"
        )
    return "\n".join(lines)


class AxisRow(BaseModel):
    """One router's score axes in one arena (or "all"): each axis's mean over
    the scenarios that have it, and the secondary axes in a user's units,
    over the scenarios with a delivered payment (None where none has)."""

    arena: str
    router: str
    scenarios: int
    success: float
    retry_efficiency: float | None = None
    time_efficiency: float | None = None
    fee_efficiency: float | None = None
    seconds: float | None = None
    fee_over_cheapest_ppm: float | None = None


def axis_rows(comparison: Comparison) -> list[AxisRow]:
    """Every router's score axes per arena, then over all scenarios."""
    rows: list[AxisRow] = []
    for arena, groups in by_arena(comparison):
        for router, scored in groups:
            axes = [s.axes for s in scored if s.axes is not None and s.axes.success > 0]
            rows.append(AxisRow(
                arena=arena, router=router, scenarios=len(scored),
                success=sum(s.success for s in scored) / len(scored),
                retry_efficiency=_mean([a.retry_efficiency for a in axes]),
                time_efficiency=_mean([a.time_efficiency for a in axes]),
                fee_efficiency=_mean([a.fee_efficiency for a in axes]),
                seconds=_mean([s.seconds for s in scored if s.seconds is not None]),
                fee_over_cheapest_ppm=_mean([s.fee_over_cheapest_ppm for s in scored
                                             if s.fee_over_cheapest_ppm is not None]),
            ))
    return rows


def render_axes(comparison: Comparison) -> str:
    """The score axes per arena (axis_rows), as Markdown."""
    def cell(value: float | None, form: str) -> str:
        return "—" if value is None else format(value, form)

    lines = ["| arena | router | scenarios | success | retry efficiency | time efficiency | "
             "fee efficiency | seconds to complete | fee above cheapest (ppm) |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in axis_rows(comparison):
        lines.append(
            f"| {r.arena} | {r.router} | {r.scenarios} | {r.success:.3f} | "
            f"{cell(r.retry_efficiency, '.3f')} | {cell(r.time_efficiency, '.3f')} | "
            f"{cell(r.fee_efficiency, '.3f')} | {cell(r.seconds, '.1f')} | "
            f"{cell(r.fee_over_cheapest_ppm, '.0f')} |")
    lines.append("\nThe secondary axes are means over the scenarios where the router delivered "
                 "a payment, each over its delivered payments; seconds are virtual (rounds × "
                 "the scenario's attempt latency) and the cheapest plan is a lower bound on "
                 "any router's fee (docs/scoring.md).")
    return "\n".join(lines)


class DistanceRow(BaseModel):
    """How far one router's mean score lies below the oracle's in one arena
    (or "all"), split by the score's terms (ScoreTerms): the four parts
    sum to `distance`."""

    arena: str
    router: str
    scenarios: int
    distance: float
    success: float
    retry: float
    time: float
    fee: float


def distance_rows(comparison: Comparison) -> list[DistanceRow]:
    """Every router but the references, per arena then over all: the mean
    over its scenarios of the oracle's score terms less its own, on the same
    scenarios (none without an oracle). A scenario without terms (a
    comparison written before them) is left out."""
    oracle = {s.scenario: s.terms for s in comparison.by_router().get(ORACLE, [])
              if s.terms is not None}
    rows: list[DistanceRow] = []
    for arena, groups in by_arena(comparison):
        for router, scored in groups:
            if router in REFERENCE_NAMES:
                continue
            gaps = [tuple(getattr(oracle[s.scenario], term) - getattr(s.terms, term)
                          for term in TERMS)
                    for s in scored if s.scenario in oracle and s.terms is not None]
            if not gaps:
                continue
            n = len(gaps)
            mean = {term: sum(g[k] for g in gaps) / n for k, term in enumerate(TERMS)}
            rows.append(DistanceRow(arena=arena, router=router, scenarios=n,
                                    distance=sum(mean.values()), **mean))
    return rows


def render_distance(comparison: Comparison) -> str:
    """The distance to the oracle by score axis (distance_rows), as Markdown;
    a line saying so when no oracle ran."""
    rows = distance_rows(comparison)
    if not rows:
        return "No oracle in this comparison: no distance to show."
    lines = ["| arena | router | scenarios | distance to oracle | from success | "
             "from retry efficiency | from time efficiency | from fee efficiency |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.arena} | {r.router} | {r.scenarios} | {r.distance:+.4f} | "
                     f"{r.success:+.4f} | {r.retry:+.4f} | {r.time:+.4f} | {r.fee:+.4f} |")
    return "\n".join(lines)


def _headroom_interval(router: str, by_router: Mapping[str, Sequence[RouterScore]],
                       arena: str) -> tuple[float, float] | None:
    """The bootstrap interval of the router's headroom over the samples of
    the arena that lnd's routers also ran, clustered by original scenario."""
    def counts(name: str) -> dict[str, tuple[int, int]]:
        return {s.scenario: (s.delivered, s.feasible) for s in by_router.get(name, ())
                if arena in ("all", s.arena) and s.feasible is not None}

    mine = counts(router)
    lnd = [counts(r) for r in LND_ROUTERS if r in by_router]
    samples = sorted(s for s in mine if all(s in m for m in lnd))
    if not samples or not lnd:
        return None

    def series(table: Mapping[str, tuple[int, int]]) -> tuple[list[float], list[float]]:
        return [table[s][0] for s in samples], [table[s][1] for s in samples]

    return headroom_interval(series(mine), [series(m) for m in lnd],
                             [original_name(s) for s in samples])


def render_scenarios(comparison: Comparison) -> str:
    """Per-scenario scores, one column per router."""
    table: dict[str, dict[str, RouterScore]] = defaultdict(dict)
    for s in comparison.scores:
        table[s.scenario][s.router] = s
    head = "| scenario | arena | " + " | ".join(comparison.routers) + " |"
    lines = [head, "|---|---|" + "---:|" * len(comparison.routers)]
    for scenario in sorted(table):
        row = table[scenario]
        arena = next(iter(row.values())).arena
        cells = []
        for r in comparison.routers:
            s = row.get(r)
            cells.append("—" if s is None else f"{s.score:.3f} ({s.success:.2f})")
        lines.append(f"| {scenario} | {arena} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def render_pairs(comparison: Comparison) -> str:
    """The paired statistics as Markdown: n samples, of which (scenarios) are
    independent (an original scenario with its reseeded copies is one), and
    the smallest difference the sample could detect."""
    lines = ["| A | B | n (scenarios) | mean A | mean B | A − B | 95% CI | detectable | "
             "Wilcoxon p | W/L/T |",
             "|---|---|---:|---:|---:|---:|---|---:|---:|---|"]
    for p in comparison.pairs:
        lines.append(
            f"| {p.a} | {p.b} | {p.n} ({p.clusters}) | {p.mean_a:.4f} | {p.mean_b:.4f} | "
            f"{p.mean_diff:+.4f} | "
            f"[{p.ci_low:+.4f}, {p.ci_high:+.4f}] | {_detectable_text(p)} | {p.p_value:.3g} | "
            f"{p.wins}/{p.losses}/{p.ties} |"
        )
    lines.append("\n*detectable*: the smallest true difference in mean score this sample "
                 "would find (its interval excluding 0) with 80 % power; a smaller one may "
                 "be real and still go unseen.")
    return "\n".join(lines)


def _detectable_text(pair: PairedComparison) -> str:
    return "—" if pair.detectable is None else f"±{pair.detectable:.4f}"


def render_verdict(comparison: Comparison, router: str = "best",
                   against: Sequence[str] | None = None) -> str:
    """In words, whether `router` beats each of `against` (by default the
    best's parent, when compared, and the seed), and the better router (by
    mean score) of each production stack, lnd's and LDK's, on these scenarios:
    better only when the paired interval excludes 0, and what the sample
    could have detected when not."""
    by_router = comparison.by_router()
    if against is None:
        against = tuple(r for r in ("parent", "seed") if by_router.get(r))
    for stack in production_stacks().values():
        if ran := [r for r in stack if by_router.get(r)]:
            means = {r: sum(s.score for s in by_router[r]) / len(by_router[r]) for r in ran}
            against = (*against, max(ran, key=lambda r: means[r]))
    lines = []
    for other in against:
        pair = _oriented_pair(comparison, router, other)
        if pair is None:
            continue
        shown = f"{pair.mean_diff:+.4f} [{pair.ci_low:+.4f}, {pair.ci_high:+.4f}]"
        if pair.wins == pair.losses == 0:
            lines.append(f"{router} scores what {other} scores on every scenario: it is not "
                         "better.")
        elif pair.ci_low > 0:
            lines.append(f"{router} beats {other}: {shown}, the 95 % interval excludes 0.")
        elif pair.ci_high < 0:
            lines.append(f"{router} is worse than {other}: {shown}, the 95 % interval "
                         "excludes 0.")
        else:
            lines.append(f"{router} is not shown better than {other}: {shown} includes 0; "
                         f"this sample detects differences of about {_detectable_text(pair)}.")
    return "\n".join(lines)


def _oriented_pair(comparison: Comparison, a: str, b: str) -> PairedComparison | None:
    """The pair of a and b as a − b, whichever order it was formed in."""
    for p in comparison.pairs:
        if (p.a, p.b) == (a, b):
            return p
        if (p.a, p.b) == (b, a):
            return p.model_copy(update={
                "a": a, "b": b, "mean_a": p.mean_b, "mean_b": p.mean_a,
                "mean_diff": -p.mean_diff, "ci_low": -p.ci_high, "ci_high": -p.ci_low,
                "wins": p.losses, "losses": p.wins,
            })
    return None
