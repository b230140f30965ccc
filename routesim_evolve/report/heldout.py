"""Held-out comparisons as Markdown: the per-arena table with the oracle's
headroom, the distance to the oracle by score axis, the paired statistics,
the per-scenario lines and the sanity check (score/compare.py computes
them)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from routesim_evolve.corpus.examples import original_name
from routesim_evolve.score.compare import Comparison, RouterScore
from routesim_evolve.score.stats import headroom_interval
from routesim_evolve.simulate.reference import LND_ROUTERS, ORACLE


def sanity_flags(comparison: Comparison) -> list[str]:
    """Scenarios where one router delivers nothing while another delivers
    something: a comparison there is suspect (an unfair world, a broken
    reference) until explained. Each flag names every router's reason."""
    by_scenario: dict[str, list[RouterScore]] = defaultdict(list)
    for s in comparison.scores:
        by_scenario[s.scenario].append(s)
    flags = []
    for scenario in sorted(by_scenario):
        rows = by_scenario[scenario]
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
        return "Sanity check: no scenario where one router delivers nothing and another something."
    return "\n".join([
        f"**Sanity check: {len(flags)} scenario(s) where a router delivered nothing while "
        "another delivered something** (check that every router sees the same world):",
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
    #: The share of the gap between the better lnd router and the oracle this
    #: router closes, on the mean score; None for the references themselves or
    #: without an oracle or lnd row.
    headroom: float | None = None
    #: True when the oracle is no better than lnd here: no gap to close.
    no_gap: bool = False
    #: The 95 % bootstrap interval of `headroom`, resampling whole scenarios
    #: (each with its reseeded copies); None with fewer than two scenarios.
    headroom_low: float | None = None
    headroom_high: float | None = None

    def headroom_text(self) -> str:
        if self.no_gap:
            return "— (no gap)"
        if self.headroom is None:
            return ""
        text = f"{100 * self.headroom:+.0f} %"
        if self.headroom_low is not None and self.headroom_high is not None:
            text += f" [{100 * self.headroom_low:+.0f}, {100 * self.headroom_high:+.0f}]"
        return text


def arena_rows(comparison: Comparison) -> list[ArenaRow]:
    """Every router's means per arena, then over all scenarios ("all").
    For each router that is not a reference, `headroom` is
    (router − better lnd) / (oracle − better lnd) on the mean score."""
    by_router = comparison.by_router()
    rows: list[ArenaRow] = []
    arenas = sorted({s.arena for s in comparison.scores})
    for arena in [*arenas, "all"]:
        mean_score = {
            router: _mean([r.score for r in by_router[router] if arena in ("all", r.arena)])
            for router in comparison.routers
        }
        for router in comparison.routers:
            scored = [s for s in by_router[router] if arena in ("all", s.arena)]
            if not scored:
                continue
            n = len(scored)
            headroom, no_gap = _headroom(router, mean_score)
            interval = None if headroom is None else _headroom_interval(router, scored, by_router)
            low, high = interval or (None, None)
            rows.append(ArenaRow(
                arena=arena, router=router, scenarios=n,
                success=sum(r.success for r in scored) / n,
                attempts_per_payment=sum(r.attempts_per_payment for r in scored) / n,
                fee_ppm=sum(r.fee_ppm for r in scored) / n,
                score=mean_score[router] or 0.0,
                headroom=headroom, no_gap=no_gap, headroom_low=low, headroom_high=high,
            ))
    return rows


def render_table(comparison: Comparison) -> str:
    """Per-arena table of every router (arena_rows), as Markdown."""
    lines = ["| arena | router | scenarios | success | attempts/payment | fee ppm | score | "
             "headroom captured |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in arena_rows(comparison):
        lines.append(
            f"| {r.arena} | {r.router} | {r.scenarios} | {r.success:.3f} | "
            f"{r.attempts_per_payment:.2f} | {r.fee_ppm:.0f} | {r.score:.4f} | "
            f"{r.headroom_text()} |"
        )
    return "\n".join(lines)


class DistanceRow(BaseModel):
    """How far one router's mean score lies below the oracle's in one arena
    (or "all"), split by the score's terms (ScoreTerms): the three parts
    sum to `distance`."""

    arena: str
    router: str
    scenarios: int
    distance: float
    success: float
    retry: float
    fee: float


def distance_rows(comparison: Comparison) -> list[DistanceRow]:
    """Every router but the references, per arena then over all: the mean
    over its scenarios of the oracle's score terms less its own, on the same
    scenarios (none without an oracle). A scenario without terms (a
    comparison written before them) is left out."""
    by_router = comparison.by_router()
    oracle = {s.scenario: s.terms for s in by_router.get(ORACLE, []) if s.terms is not None}
    rows: list[DistanceRow] = []
    arenas = sorted({s.arena for s in comparison.scores})
    for arena in [*arenas, "all"]:
        for router in comparison.routers:
            if router in (*LND_ROUTERS, ORACLE):
                continue
            gaps = [(oracle[s.scenario].success - s.terms.success,
                     oracle[s.scenario].retry - s.terms.retry,
                     oracle[s.scenario].fee - s.terms.fee)
                    for s in by_router.get(router, [])
                    if arena in ("all", s.arena) and s.scenario in oracle
                    and s.terms is not None]
            if not gaps:
                continue
            n = len(gaps)
            success, retry, fee = (sum(g[k] for g in gaps) / n for k in range(3))
            rows.append(DistanceRow(arena=arena, router=router, scenarios=n,
                                    distance=success + retry + fee,
                                    success=success, retry=retry, fee=fee))
    return rows


def render_distance(comparison: Comparison) -> str:
    """The distance to the oracle by score axis (distance_rows), as Markdown;
    a line saying so when no oracle ran."""
    rows = distance_rows(comparison)
    if not rows:
        return "No oracle in this comparison: no distance to show."
    lines = ["| arena | router | scenarios | distance to oracle | from success | "
             "from retry efficiency | from fee efficiency |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r.arena} | {r.router} | {r.scenarios} | {r.distance:+.4f} | "
                     f"{r.success:+.4f} | {r.retry:+.4f} | {r.fee:+.4f} |")
    return "\n".join(lines)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _headroom(router: str, mean_score: Mapping[str, float | None]) -> tuple[float | None, bool]:
    """The router's share of the gap between the better lnd and the oracle,
    and whether there is no gap at all."""
    lnd = [s for r in LND_ROUTERS if (s := mean_score.get(r)) is not None]
    mine, ceiling = mean_score.get(router), mean_score.get(ORACLE)
    if router in (*LND_ROUTERS, ORACLE) or mine is None or ceiling is None or not lnd:
        return None, False
    gap = ceiling - max(lnd)
    if gap <= 1e-9:
        return None, True
    return (mine - max(lnd)) / gap, False


def _headroom_interval(
    router: str, scored: Sequence[RouterScore], by_router: Mapping[str, Sequence[RouterScore]]
) -> tuple[float, float] | None:
    """The bootstrap interval of the router's headroom over the samples
    (scored) every reference also ran, clustered by original scenario."""
    def scores_of(name: str) -> dict[str, float]:
        return {s.scenario: s.score for s in by_router.get(name, ())}

    lnd = [scores_of(r) for r in LND_ROUTERS if r in by_router]
    ceiling = scores_of(ORACLE)
    samples = [s for s in scored if s.scenario in ceiling and all(s.scenario in m for m in lnd)]
    if not samples or not lnd:
        return None
    return headroom_interval(
        [s.score for s in samples],
        [[m[s.scenario] for s in samples] for m in lnd],
        [ceiling[s.scenario] for s in samples],
        [original_name(s.scenario) for s in samples],
    )


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
    independent (an original scenario with its reseeded copies is one)."""
    lines = ["| A | B | n (scenarios) | mean A | mean B | A − B | 95% CI | Wilcoxon p | W/L/T |",
             "|---|---|---:|---:|---:|---:|---|---:|---|"]
    for p in comparison.pairs:
        lines.append(
            f"| {p.a} | {p.b} | {p.n} ({p.clusters}) | {p.mean_a:.4f} | {p.mean_b:.4f} | "
            f"{p.mean_diff:+.4f} | "
            f"[{p.ci_low:+.4f}, {p.ci_high:+.4f}] | {p.p_value:.3g} | "
            f"{p.wins}/{p.losses}/{p.ties} |"
        )
    return "\n".join(lines)
