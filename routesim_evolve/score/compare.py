"""Score several routers on the same scenarios and compare them pair by pair.

Routers are candidates (Go sources, run through the sandbox) and lnd's
reference routers (from the reference cache). Every router meets the same
scenarios with the same draws, so the comparison is paired per scenario.
With revalidation each scenario also runs in N reseeded copies (the corpus
writes them), each one more paired observation, so that a win holds beyond
the luck of one draw. report/heldout.py renders the result.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from itertools import combinations
from pathlib import Path

from pydantic import BaseModel

from routesim_evolve.corpus.examples import ScenarioExample, original_name, reseeded
from routesim_evolve.corpus.rules_summary import rules_line
from routesim_evolve.corpus.schema import Scenario
from routesim_evolve.corpus.worlds import PUBLIC, WorldSecret, resolve
from routesim_evolve.score.axes import ScoreAxes, ScoreTerms, score_result
from routesim_evolve.score.evaluator import Evaluation, Evaluator, ReferenceResults
from routesim_evolve.score.stats import PairedComparison, compare_paired
from routesim_evolve.simulate.result_format import Result
from routesim_evolve.simulate.routers import ORACLE
from routesim_evolve.textclip import clip_line


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
    #: Payments the feasible bound allows in this router's world (None in a
    #: comparison written before the bound), and payments delivered outside
    #: it: a broken ceiling, flagged by the sanity check.
    feasible: int | None = None
    beyond_bound: int = 0
    #: Delivered payments that paid less than their cheapest plan, beyond
    #: lnd's rounding: a broken fee bound, flagged by the sanity check.
    below_cheapest: int = 0
    #: The score split by axis (ScoreAxes.terms): where a distance lies;
    #: None in a comparison written before the terms.
    terms: ScoreTerms | None = None
    #: The score's axes, and what the secondary ones measure in units a
    #: user feels, over the delivered payments: virtual seconds to complete
    #: and the fee paid above the cheapest plan, in ppm of the amount. None
    #: without a delivered payment or in a comparison written before them.
    axes: ScoreAxes | None = None
    seconds: float | None = None
    fee_over_cheapest_ppm: float | None = None


class ReplayCheck(BaseModel):
    """One router's score in the corpus's own worlds against its score in
    hidden ones, paired by scenario (`compare --check-replay`)."""

    router: str
    #: A reference router (lnd, ldk, the oracle): it carries no corpus, so
    #: its difference is what the worlds alone move.
    control: bool
    #: Public minus hidden: a = the corpus's own worlds, b = the hidden ones.
    difference: PairedComparison
    #: A candidate's difference minus the control's, scenario by scenario:
    #: a = the candidate, b = the reference whose difference is largest.
    #: None for a reference, or with none to compare against.
    beyond_control: PairedComparison | None = None
    #: A candidate whose public score exceeds its hidden one beyond noise and
    #: beyond what the worlds alone move (the interval of beyond_control, or
    #: of the difference without a control, above 0, over two scenarios at
    #: least): it may carry the corpus and replay its worlds.
    flagged: bool


class Comparison(BaseModel):
    """Every router on every scenario, and the paired statistics."""

    routers: list[str]
    scores: list[RouterScore]
    pairs: list[PairedComparison]
    #: The worlds played: "public" (the corpus's own, replayable by a
    #: candidate that carries the corpus) or the 64-hex-digit secret of the
    #: hidden ones (`--world-secret HEX` plays them again); "" where not
    #: recorded (a run's held-out table: its secret stays in world.key).
    world_secret: str = ""
    #: The rules real nodes enforce that the scenarios played, in words
    #: (report/rules.py); "" for a comparison recorded before they were said.
    rules_played: str = ""
    #: With `--check-replay`: every router's public-minus-hidden score.
    replay_check: list[ReplayCheck] = []

    def by_router(self) -> dict[str, list[RouterScore]]:
        out: dict[str, list[RouterScore]] = defaultdict(list)
        for s in self.scores:
            out[s.router].append(s)
        return out


def compare_routers(
    candidates: Mapping[str, str],
    examples: Sequence[ScenarioExample],
    evaluator: Evaluator,
    references: ReferenceResults,
    *,
    workers: int | None = None,
    revalidate: int = 0,
    secret: WorldSecret = PUBLIC,
    on_progress: Callable[[str], None] | None = None,
) -> Comparison:
    """Score candidate sources, lnd's routers and the oracle on the examples,
    pairwise (the oracle is a ceiling: no pair is formed with it), in the
    worlds of `secret` (corpus/worlds.py; the examples' own when public)."""
    references = references.with_oracle()
    with tempfile.TemporaryDirectory(prefix="routesim-reseed-") as tmp:
        pool = reseeded(examples, revalidate, Path(tmp)) if revalidate else list(examples)
        pool = resolve(pool, secret, Path(tmp) / "worlds")
        scores: list[RouterScore] = []
        evaluated = _run_all(candidates, pool, evaluator, references, workers, on_progress)
        for name, evals in evaluated.items():
            scores += [_candidate_score(name, ex, ev) for ex, ev in zip(pool, evals, strict=True)]
        for router in references.routers:
            scores += [_reference_score(router, ex, references) for ex in pool]
    routers = [*candidates, *references.routers]
    return Comparison(routers=routers, scores=scores, pairs=_pairs(routers, scores, candidates),
                      rules_played=rules_line(
                          Scenario.model_validate_json(e.path.read_bytes()) for e in examples))


def _run_all(
    candidates: Mapping[str, str],
    pool: Sequence[ScenarioExample],
    evaluator: Evaluator,
    references: ReferenceResults,
    workers: int | None,
    on_progress: Callable[[str], None] | None,
) -> dict[str, list[Evaluation]]:
    """The references and every candidate on every scenario, in one pool of
    `workers` (_job_order): both cores stay busy to the end, where the
    references first, then one candidate after another, would leave one idle
    at the end of each. Names with the same source (a best that is the seed)
    share one evaluation: run side by side, both would miss the cache and
    run it twice."""
    references.prepare(pool, say=on_progress)
    sources = list(dict.fromkeys(candidates.values()))
    got: dict[str, list[Evaluation | None]] = {s: [None] * len(pool) for s in sources}
    left = dict.fromkeys(sources, len(pool))
    refs_done = 0
    lock = threading.Lock()

    def one(job: tuple[str | None, int]) -> None:
        nonlocal refs_done
        source, i = job
        if source is None:
            references.results(pool[i])
            with lock:
                refs_done += 1
                said = f"references: {refs_done}/{len(pool)} ({pool[i].name})"
        else:
            ev = evaluator.evaluate(source, pool[i])
            with lock:
                got[source][i] = ev
                left[source] -= 1
                said = "" if left[source] else (
                    ", ".join(n for n, s in candidates.items() if s == source)
                    + f": {len(pool)} scenarios scored")
        if said and on_progress:
            on_progress(said)

    with ThreadPoolExecutor(max_workers=workers or os.cpu_count() or 1) as executor:
        list(executor.map(one, _job_order(len(pool), sources)))
    return {n: [ev for ev in got[s] if ev is not None] for n, s in candidates.items()}


def _job_order(scenarios: int, sources: Sequence[str]) -> list[tuple[str | None, int]]:
    """The pool's jobs in the order they start: (None, i) runs the
    references on scenario i, (source, i) a candidate. Each scenario's
    references start a scenario ahead of its candidates, whose scoring
    needs them: a candidate seldom waits on a reference run, and no run
    happens twice (a reference result is made once under a lock)."""
    order: list[tuple[str | None, int]] = []
    for i in range(scenarios + 1):
        if i < scenarios:
            order.append((None, i))
        if i > 0:
            order += [(source, i - 1) for source in sources]
    return order


def _candidate_score(name: str, ex: ScenarioExample, ev: Evaluation) -> RouterScore:
    return _row(name, ex, ev.status, ev.axes, ev.result, why=ev.feedback)


def _reference_score(router: str, ex: ScenarioExample, references: ReferenceResults) -> RouterScore:
    return result_score(router, ex, references.results(ex)[router])


def result_score(router: str, ex: ScenarioExample, res: Result) -> RouterScore:
    """A router's line on a scenario from a valid result, scored here."""
    return _row(router, ex, "ok", score_result(res), res)


def _row(
    router: str, ex: ScenarioExample, status: str, axes: ScoreAxes, res: Result | None,
    why: str = "",
) -> RouterScore:
    """One router's line on one scenario; a run without a result shows 0s,
    and its status with the first words of `why` (the feedback) as reason."""
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
        reason=failure_reason(res) if res else _no_result_reason(status, why),
        feasible=res.totals.feasible if res else None,
        beyond_bound=sum(p.success and not p.feasible for p in res.payments) if res else 0,
        below_cheapest=sum(p.below_cheapest_plan for p in res.payments) if res else 0,
        terms=axes.terms(),
        axes=axes,
        **(delivered_costs(res) if res else {}),
    )


def delivered_costs(res: Result) -> dict[str, float]:
    """Over the delivered payments: mean virtual seconds to complete and
    mean fee above the cheapest plan, in ppm of the amount (empty without a
    delivered payment)."""
    delivered = [p for p in res.payments if p.success]
    if not delivered:
        return {}
    n = len(delivered)
    return {
        "seconds": sum(p.elapsed_s for p in delivered) / n,
        "fee_over_cheapest_ppm": sum(
            1e6 * max(p.fee_msat - p.cheapest_fee_msat, 0) / max(p.amount_msat, 1)
            for p in delivered
        ) / n,
    }


def _no_result_reason(status: str, why: str) -> str:
    """A run without a result: its status, and the first words of why."""
    return status + (f": {clip_line(' '.join(why.split()), 160)}" if why.strip() else "")


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


def _pairs(
    routers: Sequence[str], scores: Sequence[RouterScore], candidates: Mapping[str, str]
) -> list[PairedComparison]:
    """Every candidate against every other router, paired by scenario."""
    table = _score_table(scores)
    pairs = []
    for a, b in combinations(routers, 2):
        if (a not in candidates and b not in candidates) or ORACLE in (a, b):
            continue
        pairs.append(pair_scores(a, b, table[a], table[b]))
    return pairs


def replay_check(public: Comparison, hidden: Comparison,
                 candidates: Collection[str]) -> list[ReplayCheck]:
    """Each router of `hidden` scored in the corpus's own worlds (`public`,
    the same routers and scenarios) minus in the hidden ones, paired by
    scenario as compare's pairs are.

    The two kinds of world need not be alike: the corpus's payments were
    sized and their targets picked in its own worlds, and on the bundled
    corpus the hidden ones hold larger amounts, so an honest router can
    score more in the corpus's own worlds beyond noise (the seed +0.11 on
    val, ldk as much). So a candidate is flagged only when its difference
    exceeds the control's, the reference router's whose difference is
    largest, beyond noise, over two scenarios at least (one has no noise to
    measure)."""
    in_public, in_hidden = _score_table(public.scores), _score_table(hidden.scores)
    moved = {router: {s: in_public[router][s] - in_hidden[router][s]
                      for s in in_public[router].keys() & in_hidden[router].keys()}
             for router in hidden.routers}
    checks = [ReplayCheck(router=router, control=router not in candidates, flagged=False,
                          difference=pair_scores(f"{router} (public)", f"{router} (hidden)",
                                                 in_public[router], in_hidden[router]))
              for router in hidden.routers]
    control = control_router(checks)
    for check in checks:
        if check.control:
            continue
        beyond = (pair_scores(check.router, control, moved[check.router], moved[control])
                  if control is not None else None)
        judged = beyond or check.difference
        check.beyond_control = beyond
        check.flagged = judged.clusters > 1 and judged.ci_low > 0
    return checks


def control_router(checks: Sequence[ReplayCheck]) -> str | None:
    """The reference router whose public-minus-hidden difference is the
    largest: the control a candidate's is judged against (None without a
    reference)."""
    controls = [c for c in checks if c.control]
    return max(controls, key=lambda c: c.difference.mean_diff).router if controls else None


def _score_table(scores: Sequence[RouterScore]) -> dict[str, dict[str, float]]:
    """Scores by router, then by scenario."""
    table: dict[str, dict[str, float]] = defaultdict(dict)
    for s in scores:
        table[s.router][s.scenario] = s.score
    return table


def pair_scores(
    a: str, b: str, scores_a: Mapping[str, float], scores_b: Mapping[str, float]
) -> PairedComparison:
    """a against b on the scenarios both have (scores by scenario name),
    each original scenario with its reseeded copies one cluster."""
    common = sorted(set(scores_a) & set(scores_b))
    return compare_paired(a, b, [scores_a[s] for s in common], [scores_b[s] for s in common],
                          clusters=[original_name(s) for s in common])
