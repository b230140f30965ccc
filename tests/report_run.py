"""A small run dir written by hand, for the HTML report's tests: a seed and
two children (one accepted, one rejected) with evaluations on the tiny
corpus's val and test scenarios, a finished summary, and references that
answer from memory (no Go build)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from routesim_evolve.corpus.examples import ScenarioExample, load_examples
from routesim_evolve.runs.settings import EvolveSettings, RunSummary
from routesim_evolve.runs.stamp import claim_scoring
from routesim_evolve.score.axes import score_result
from routesim_evolve.score.compare import Comparison, result_score
from routesim_evolve.score.evaluator import Evaluation, candidate_hash, eval_cache_file
from routesim_evolve.score.stats import compare_paired
from routesim_evolve.simulate.result_format import Result

SEED = "package main\n\n// seed\nfunc route() int {\n\treturn 1\n}\n"
CHILD = SEED.replace("return 1", "return 2 // child's change")
LOSER = SEED.replace("return 1", "return 0")
#: Payment amounts in msat: one in each of three decades of sat.
AMOUNTS = (50_000_000, 500_000_000, 5_000_000_000)
#: Per router, which of the three payments succeed and with how many attempts.
PLAYS = {
    "seed": ((True, 1), (True, 3), (False, 6)),
    "best": ((True, 1), (True, 2), (True, 4)),
    "lnd-apriori": ((True, 2), (False, 8), (False, 9)),
    "lnd-bimodal": ((True, 1), (True, 5), (False, 9)),
    "oracle": ((True, 1), (True, 1), (True, 1)),
}
COST_USD = (0.25, 0.5)


def result(router: str, ex: ScenarioExample) -> Result:
    payments = []
    for i, (amount, (ok, attempts)) in enumerate(zip(AMOUNTS, PLAYS[router], strict=True)):
        payments.append({
            "index": i, "target": "n1", "amount_msat": amount,
            "delivered_msat": amount if ok else 0, "success": ok, "attempts": attempts,
            "feasible": True, "bound_msat": amount,
            "parts": 1, "fee_msat": amount // 1000 if ok else 0, "fee_limit_msat": amount // 100,
            "failure_reason": "" if ok else "attempts_exhausted", "router_ns": 0,
            "attempt_log": [],
        })
    delivered = [p for p in payments if p["success"]]
    amount = sum(p["amount_msat"] for p in delivered)
    fees = sum(p["fee_msat"] for p in delivered)
    return Result.model_validate({
        "format": "routesim-result/1", "scenario": ex.name, "arena": ex.arena, "router": router,
        "seed": 1, "payments": payments,
        "totals": {
            "payments": 3, "succeeded": len(delivered), "feasible": 3,
            "success_rate": len(delivered) / 3,
            "attempts": sum(p["attempts"] for p in payments),
            "attempts_per_payment": sum(p["attempts"] for p in payments) / 3,
            "amount_msat": sum(AMOUNTS), "delivered_msat": amount, "fee_msat": fees,
            "fee_ppm": 1e6 * fees / amount if amount else 0.0, "router_ns": 0, "sim_ns": 0,
        },
    })


class MemoryReferences:
    """lnd's routers and the oracle, answered from PLAYS."""

    def results(self, example: ScenarioExample) -> Mapping[str, Result]:
        return {r: result(r, example) for r in ("lnd-apriori", "lnd-bimodal", "oracle")}


def _write_eval(run_dir: Path, source: str, router: str, ex: ScenarioExample) -> Evaluation:
    res = result(router, ex)
    ev = Evaluation(scenario=ex.name, arena=ex.arena, status="ok", axes=score_result(res),
                    feedback="", result=res)
    path = eval_cache_file(run_dir / "evals", source, ex)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(ev.model_dump_json())
    return ev


def make_run(run_dir: Path, corpus: Path, *, finished: bool = True) -> Path:
    """Write the run dir; `finished` adds best.go and report.json."""
    val = load_examples(corpus, "val")
    test = load_examples(corpus, "test")
    (run_dir / "candidates").mkdir(parents=True)
    claim_scoring(run_dir)  # as a run's start does
    for source in (SEED, CHILD, LOSER):
        (run_dir / "candidates" / f"{candidate_hash(source)}.go").write_text(source)
    settings = EvolveSettings(corpus=corpus, run_dir=run_dir, reflection=["offline"])
    (run_dir / "settings.json").write_text(settings.model_dump_json())
    val_score = {}
    for source, router in ((SEED, "seed"), (CHILD, "best")):
        evs = [_write_eval(run_dir, source, router, ex) for ex in val]
        val_score[source] = sum(e.score for e in evs) / len(evs)
    seed_id, child_id, loser_id = (candidate_hash(s) for s in (SEED, CHILD, LOSER))
    events = [
        {"t": 1.0, "event": "start", "seed": seed_id, "trainset": 1, "valset": len(val)},
        {"t": 2.0, "event": "val", "iteration": 0, "idx": 0, "candidate": seed_id,
         "score": val_score[SEED], "scores": {}, "best": True},
        {"t": 3.0, "event": "parent", "iteration": 1, "parent": seed_id},
        {"t": 3.1, "event": "proposal", "iteration": 1, "children": [child_id],
         "skipped": False, "proposer": "proposer claude:opus"},
        # As the cost ledger logs each LM reply (docs/llm.md).
        {"t": 3.05, "event": "lm_usage", "backend": "claude:opus", "model": "opus",
         "cost_usd": COST_USD[0], "input_tokens": 10, "output_tokens": 900,
         "cache_write_tokens": 8000, "cache_write_1h_tokens": 0, "cache_read_tokens": 0,
         "reported_cost_usd": COST_USD[0]},
        {"t": 3.06, "event": "lm_usage", "backend": "openai:gpt-5.5", "model": "gpt-5.5",
         "cost_usd": None, "input_tokens": 100, "output_tokens": 50,
         "cache_write_tokens": 0, "cache_write_1h_tokens": 0, "cache_read_tokens": 0},
        {"t": 3.2, "event": "accepted", "iteration": 1, "idx": 1, "score": 2.0},
        {"t": 4.0, "event": "val", "iteration": 1, "idx": 1, "candidate": child_id,
         "score": val_score[CHILD], "scores": {}, "best": True, "metric_calls": 7},
        {"t": 5.0, "event": "parent", "iteration": 2, "parent": child_id},
        {"t": 5.1, "event": "proposal", "iteration": 2, "children": [loser_id],
         "skipped": False, "proposer": "proposer offline"},
        {"t": 5.05, "event": "lm_usage", "backend": "claude:opus", "model": "opus",
         "cost_usd": COST_USD[1], "input_tokens": 5, "output_tokens": 100,
         "cache_write_tokens": 0, "cache_write_1h_tokens": 0, "cache_read_tokens": 8000},
        {"t": 5.2, "event": "rejected", "iteration": 2, "old": 2.0, "new": 1.0, "reason": "x"},
    ]
    (run_dir / "log.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    if finished:
        (run_dir / "best.go").write_text(CHILD)
        for source, router in ((SEED, "seed"), (CHILD, "best")):
            for ex in test:
                _write_eval(run_dir, source, router, ex)
        summary = RunSummary(run_dir=run_dir, best_path=run_dir / "best.go",
                             best_val=val_score[CHILD], seed_val=val_score[SEED], candidates=2,
                             metric_calls=9, test=_comparison(test))
        (run_dir / "report.json").write_text(summary.model_dump_json())
    return run_dir


def _comparison(test: list[ScenarioExample]) -> Comparison:
    routers = ["best", "seed", "lnd-apriori", "lnd-bimodal", "oracle"]
    scores = [result_score(router, ex, result(router, ex)) for router in routers for ex in test]
    by = {r: [s.score for s in scores if s.router == r] for r in routers}
    pairs = [compare_paired(a, b, by[a], by[b])
             for a, b in (("best", "seed"), ("best", "lnd-apriori"), ("best", "lnd-bimodal"))]
    return Comparison(routers=routers, scores=scores, pairs=pairs)
