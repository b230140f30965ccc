"""Score several routers on the same scenarios and compare them pair by pair.

Routers are candidates (Go sources, run through the sandbox) and lnd's
reference routers (from the reference cache). Every router meets the same
scenarios with the same draws, so the comparison is paired per scenario.
With revalidation each scenario also runs in N reseeded copies, each one
more paired observation, so that a win holds beyond the luck of one draw.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from pathlib import Path

from pydantic import BaseModel

from routesim_evolve.corpus.load import LoadedScenario, graph_path_of, load_scenario
from routesim_evolve.report.stats import PairedComparison, compare_paired
from routesim_evolve.score.axes import ScoreAxes, score_result
from routesim_evolve.score.evaluator import (
    Evaluation,
    Evaluator,
    LndReferences,
    ScenarioExample,
)
from routesim_evolve.simulate.reference import LND_ROUTERS, ORACLE
from routesim_evolve.simulate.result import Result
from routesim_evolve.textclip import clip_line

# Reseeded copies differ from the original by this stride in the seed.
RESEED_STRIDE = 1_000_003


class RouterScore(BaseModel):
    """One router on one scenario."""

    router: str
    scenario: str
    arena: str
    status: str
    score: float
    success: float
    attempts_per_payment: float
    fee_ppm: float
    #: Payments delivered, and why the others failed (the commonest reason).
    delivered: int = 0
    reason: str = ""


class Comparison(BaseModel):
    """Every router on every scenario, and the paired statistics."""

    routers: list[str]
    scores: list[RouterScore]
    pairs: list[PairedComparison]

    def by_router(self) -> dict[str, list[RouterScore]]:
        out: dict[str, list[RouterScore]] = defaultdict(list)
        for s in self.scores:
            out[s.router].append(s)
        return out


def reseeded_examples(
    examples: Sequence[ScenarioExample], copies: int, workdir: Path
) -> list[ScenarioExample]:
    """The examples plus `copies` reseeded copies of each, written to workdir
    with their graph path made absolute."""
    out = list(examples)
    for ex in examples:
        data = json.loads(ex.path.read_text())
        graph = Path(graph_path_of(ex.path, data["graph"])).resolve()
        for k in range(1, copies + 1):
            copy = dict(data, seed=int(data["seed"]) + k * RESEED_STRIDE, graph=str(graph))
            copy["name"] = f"{data['name']}~r{k}"
            path = workdir / ex.split / f"{copy['name']}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(copy))
            out.append(ScenarioExample.of(ex.split, load_scenario(path)))
    return out


def compare_routers(
    candidates: Mapping[str, str],
    examples: Sequence[ScenarioExample],
    evaluator: Evaluator,
    references: LndReferences,
    *,
    workers: int | None = None,
    revalidate: int = 0,
    on_progress: Callable[[str], None] | None = None,
) -> Comparison:
    """Score candidate sources, lnd's routers and the oracle on the examples,
    pairwise (the oracle is a ceiling: no pair is formed with it)."""
    references = references.with_oracle()
    with tempfile.TemporaryDirectory(prefix="routesim-reseed-") as tmp:
        pool = reseeded_examples(examples, revalidate, Path(tmp)) if revalidate else list(examples)
        references.precompute(pool, workers=workers, say=on_progress)
        scores: list[RouterScore] = []
        for name, source in candidates.items():
            evals = evaluator.evaluate_many(source, pool, workers=workers)
            scores += [_candidate_score(name, ex, ev) for ex, ev in zip(pool, evals, strict=True)]
            if on_progress:
                on_progress(f"{name}: {len(pool)} scenarios scored")
        for router in references.routers:
            scores += [_reference_score(router, ex, references) for ex in pool]
    routers = [*candidates, *references.routers]
    return Comparison(routers=routers, scores=scores, pairs=_pairs(routers, scores, candidates))


def _candidate_score(name: str, ex: ScenarioExample, ev: Evaluation) -> RouterScore:
    return _row(name, ex, ev.status, ev.axes, ev.result)


def _reference_score(router: str, ex: ScenarioExample, references: LndReferences) -> RouterScore:
    res = references.results(ex)[router]
    return _row(router, ex, "ok", score_result(res), res)


def _row(
    router: str, ex: ScenarioExample, status: str, axes: ScoreAxes, res: Result | None
) -> RouterScore:
    """One router's line on one scenario; a run without a result shows 0s."""
    return RouterScore(
        router=router,
        scenario=ex.name,
        arena=ex.arena,
        status=status,
        score=axes.score,
        success=axes.success,
        attempts_per_payment=res.totals.attempts_per_payment if res else 0.0,
        fee_ppm=res.totals.fee_ppm if res else 0.0,
        delivered=res.totals.succeeded if res else 0,
        reason=failure_reason(res) if res else status,
    )


def failure_reason(res: Result) -> str:
    """Why a router's failed payments failed: the commonest reason, with an
    example of the error it came with."""
    failed = [p for p in res.payments if not p.success]
    if not failed:
        return ""
    reasons = Counter(p.failure_reason or "unknown" for p in failed)
    reason, count = reasons.most_common(1)[0]
    error = next((p.error for p in failed if p.failure_reason == reason and p.error), None)
    return f"{count}/{len(res.payments)} failed: {reason}" + (f" ({clip_line(error, 120)})"
                                                             if error else "")


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


def _pairs(
    routers: Sequence[str], scores: Sequence[RouterScore], candidates: Mapping[str, str]
) -> list[PairedComparison]:
    """Every candidate against every other router, paired by scenario."""
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for s in scores:
        table[s.router][s.scenario] = s.score
    pairs = []
    for a, b in combinations(routers, 2):
        if (a not in candidates and b not in candidates) or ORACLE in (a, b):
            continue
        common = sorted(set(table[a]) & set(table[b]))
        pairs.append(
            compare_paired(a, b, [table[a][s] for s in common], [table[b][s] for s in common])
        )
    return pairs


def examples_of(split: str, loaded: Sequence[LoadedScenario]) -> list[ScenarioExample]:
    """GEPA/evaluator examples of a loaded split."""
    return [ScenarioExample.of(split, s) for s in loaded]


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

    def headroom_text(self) -> str:
        if self.no_gap:
            return "— (no gap)"
        return "" if self.headroom is None else f"{100 * self.headroom:+.0f} %"


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
            rows.append(ArenaRow(
                arena=arena, router=router, scenarios=n,
                success=sum(r.success for r in scored) / n,
                attempts_per_payment=sum(r.attempts_per_payment for r in scored) / n,
                fee_ppm=sum(r.fee_ppm for r in scored) / n,
                score=mean_score[router] or 0.0,
                headroom=headroom, no_gap=no_gap,
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
    """The paired statistics as Markdown."""
    lines = ["| A | B | n | mean A | mean B | A − B | 95% CI | Wilcoxon p | W/L/T |",
             "|---|---|---:|---:|---:|---:|---|---:|---|"]
    for p in comparison.pairs:
        lines.append(
            f"| {p.a} | {p.b} | {p.n} | {p.mean_a:.4f} | {p.mean_b:.4f} | {p.mean_diff:+.4f} | "
            f"[{p.ci_low:+.4f}, {p.ci_high:+.4f}] | {p.p_value:.3g} | "
            f"{p.wins}/{p.losses}/{p.ties} |"
        )
    return "\n".join(lines)
