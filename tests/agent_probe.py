"""What the probing stand-in agents share: the opening of their script (it
reads its targets, finds its eval script and spool among the agent CLI's
arguments, and records what each attempt got, `attempt`, and what the
evaluation server answered, `answer`), and the agentic proposer a run
would run them with, in its real jail, with its real evaluation server."""

from __future__ import annotations

from pathlib import Path

from routesim_evolve.corpus.examples import load_examples
from routesim_evolve.corpus.load import load_manifest
from routesim_evolve.propose.agentic import AgenticProposer, run_jail
from routesim_evolve.propose.eval_service import AGENT_EVALS, MinibatchEvaluations
from routesim_evolve.reflect.base import RetryPolicy
from routesim_evolve.reflect.cli_backend import ClaudeCLIBackend
from routesim_evolve.reflect.prompts import GoDocs, PromptPack
from routesim_evolve.score.axes import ScoreAxes
from routesim_evolve.score.evaluator import Evaluator, ReferenceResults
from routesim_evolve.score.feedback import ScenarioFeedback

_OPENING = r'''
import json, os, re, subprocess, sys, time
from pathlib import Path

T = json.loads(Path(TARGETS).read_text())
argv = sys.argv[1:]
script = next(m.group(1) for a in argv if (m := re.fullmatch(r"Bash\((.*):\*\)", a)))
spool = Path(argv[argv.index("--add-dir") + 1])
sys.stdin.read()
got = {}

def attempt(name, action):
    try:
        got[name] = "ok: " + str(action())[:300]
    except Exception as exc:
        got[name] = "denied: " + type(exc).__name__

def answer(name, timeout=60):
    """The server's answer to request `name`, or "no answer" by `timeout`."""
    out = spool / (name + ".out")
    deadline = time.monotonic() + timeout
    while not out.exists():
        if time.monotonic() > deadline:
            return "no answer"
        time.sleep(0.1)
    return out.read_text()
'''


def probe_script(python: str, targets: Path, attempts: str) -> str:
    """A stand-in `claude` run by `python`, reading `targets` (JSON), that
    runs `attempts` (Python, using T, script, spool, got, attempt, answer)."""
    return f"#!{python} -S\nTARGETS = {str(targets)!r}\n{_OPENING}\n{attempts}"


def jailed_proposer(agent: Path, run: Path,
                    corpus: Path) -> tuple[AgenticProposer, ScenarioFeedback]:
    """The agentic proposer of run dir `run` with `agent` as its claude, its
    evaluation server scoring the corpus's train scenarios, and feedback on
    the first of them to propose from."""
    train = load_examples(corpus, "train")
    references = ReferenceResults()
    references.precompute(train, workers=1)
    backend = ClaudeCLIBackend(executable=str(agent), retry=RetryPolicy(max_tries=1),
                               jail=run_jail(run))
    proposer = AgenticProposer(backend, PromptPack(load_manifest(corpus),
                                                   docs=GoDocs(contract="-", toolkit="-")))
    proposer.attach_evaluations(MinibatchEvaluations(
        Evaluator(references, cache_dir=run / AGENT_EVALS), references, train))
    axes = ScoreAxes(success=0.5, retry_efficiency=0.4, fee_efficiency=0.9)
    feedback = ScenarioFeedback(scenario=train[0].name, arena=train[0].arena,
                                score=axes.score, axes=axes, references={}, text="")
    return proposer, feedback
