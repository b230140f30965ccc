"""What an agentic proposer's eval script runs: the agent's edit scored on
the iteration's minibatch with the run's own settings.

The agent runs `eval_minibatch.sh`, which calls `python -m routesim_evolve
agent-eval --run-dir RUN --references ROOT --scenarios A,B FILE`. It reads
the run's settings.json (corpus, time and memory limits, workers), so the
agent's checks are scored as GEPA will score the proposal.

The agent is not trusted with the run's caches: a poisoned evaluation,
binary or reference entry would score its next proposal. So the script
runs with the project cache pointed at the agents' sandbox (ROOT/
agent-sandbox: agents' builds and evaluations, which no trusted build and
no scorer reads), and reads lnd's reference results from the trusted cache
(ROOT) without writing to it (a read-only ReferenceCache: a missing one is
an error, never computed from the agent's tree and stored); the run
precomputed them for every train scenario. A candidate that cannot be
built or breaks a rule is printed with the reason, never as a bare 0, and
each result is logged to --log (in the run's agent-log folder), which the
proposer relays to the run's log.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

from routesim_evolve.build.gomodule import cache_root
from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.corpus.worlds import played_examples
from routesim_evolve.runs.settings import EvolveSettings
from routesim_evolve.score.axes import score_result
from routesim_evolve.score.evaluator import Evaluation, Evaluator, LndReferences, candidate_hash
from routesim_evolve.simulate.reference import ReferenceCache, ReferenceMissing

# How much of a failure's feedback the log line keeps.
REASON_CHARS = 400


class AgentEvalError(ValueError):
    """The run dir or a scenario name cannot be used; the message says which."""


def run_settings(run_dir: Path) -> EvolveSettings:
    path = run_dir / "settings.json"
    try:
        return EvolveSettings.model_validate(orjson.loads(path.read_bytes()))
    except (OSError, orjson.JSONDecodeError, ValueError) as err:
        raise AgentEvalError(f"{path}: not a run's settings ({err})") from None


def agent_eval(
    run_dir: Path,
    names: Sequence[str],
    source: str,
    *,
    references_root: Path,
    log_path: Path,
    say: Callable[[str], None] = print,
) -> list[Evaluation]:
    """Score `source` on the named train scenarios and print each result."""
    settings = run_settings(run_dir)
    # The run's own worlds (corpus/worlds.py): the references it computed
    # are for those.
    train = played_examples(run_dir, "train") or load_examples(settings.corpus, "train")
    chosen = [e for e in train if e.name in set(names)] if names else train
    missing = sorted(set(names) - {e.name for e in chosen})
    if missing:
        raise AgentEvalError(f"{settings.corpus}/train has no scenario {', '.join(missing)}")
    references = LndReferences(ReferenceCache(root=references_root, read_only=True))
    own = cache_root()
    evaluator = Evaluator(references, cache_dir=own / "evals",
                          limits=settings.limits)
    try:
        evaluations = evaluator.evaluate_many(source, chosen, workers=settings.max_concurrency)
    except ReferenceMissing as exc:
        raise AgentEvalError(str(exc)) from None
    cid = candidate_hash(source)
    for example, ev in zip(chosen, evaluations, strict=True):
        lnd = ", ".join(f"{name} {score_result(r).score:.3f}"
                        for name, r in references.results(example).items())
        say(f"## {example.name} ({example.arena}): score {ev.score:.3f} [{ev.status}]; {lnd}")
        say(ev.feedback.strip() + "\n")
        _log(log_path, cid, ev)
    mean = sum(e.score for e in evaluations) / max(1, len(evaluations))
    say(f"mean score {mean:.3f} on {len(evaluations)} scenario(s)")
    return evaluations


def _log(path: Path, cid: str, ev: Evaluation) -> None:
    """One line per evaluation; a failure keeps the head of its reason."""
    record = {"t": round(time.time(), 3), "event": "agent_eval", "candidate": cid,
              "scenario": ev.scenario, "status": ev.status, "score": round(ev.score, 4)}
    if ev.status != "ok":
        record["reason"] = ev.feedback.strip()[:REASON_CHARS]
    with path.open("ab") as f:
        f.write(orjson.dumps(record) + b"\n")
