"""The agentic proposer: a command-line agent (claude, codex) edits the
candidate in a work dir, in a jail (reflect/jail.py), and may score its edit
on the minibatch with an eval script before it hands the file back.

The script hands the file to the harness's evaluation server
(eval_service.py), outside the jail, which scores it as the run scores any
candidate. The jail hides the run dir (its world key, hidden worlds and
evaluations), the other runs beside it and the project cache; the
whole file system is read-only to the agent but for its work dir, the
server's spool folder and the tool's own state.
"""

from __future__ import annotations

import shlex
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from routesim_evolve.build.gomodule import cache_root
from routesim_evolve.corpus.worlds import SECRET_FILE
from routesim_evolve.propose.base import PromptedProposer
from routesim_evolve.propose.eval_service import CLIENT, MinibatchEvaluations, serving
from routesim_evolve.reflect.cli_backend import AgentCLIBackend
from routesim_evolve.reflect.jail import AgentJail
from routesim_evolve.reflect.prompts import HandIn, PromptPack
from routesim_evolve.reflect.reply import SUMMARY_CHARS
from routesim_evolve.score.feedback import ScenarioFeedback
from routesim_evolve.textclip import clip_line


def run_jail(run_dir: Path) -> AgentJail:
    """The jail of a run's agents: the run dir, the project cache and the
    other runs beside it (folders holding a world key) hidden."""
    run_dir = run_dir.resolve()
    runs = run_dir.parent
    others = sorted(d for d in runs.iterdir() if d != run_dir and (d / SECRET_FILE).is_file()) \
        if runs.is_dir() else []
    return AgentJail(hidden=(run_dir, cache_root(), *others))


def eval_script(spool: Path) -> str:
    """A shell script that scores a candidate file on the minibatch's
    scenarios through the evaluation server's spool folder."""
    client = [sys.executable, "-I", "-S", "-c", CLIENT, str(spool)]
    return (
        "#!/bin/sh\n"
        "# Score a candidate (default ./candidate_impl.go) on this iteration's scenarios,\n"
        "# as the run scores it, beside lnd-apriori, lnd-bimodal and ldk.\n"
        f'exec {shlex.join(client)} "${{1:-candidate_impl.go}}"\n'
    )


class AgenticProposer(PromptedProposer):
    """An agent CLI that edits candidate_impl.go in place."""

    hand_in: HandIn = "edit"

    def __init__(self, backend: AgentCLIBackend, pack: PromptPack) -> None:
        super().__init__(pack)
        self.backend = backend
        self.name = f"{backend.name} (agentic)"
        self.evaluations: MinibatchEvaluations | None = None

    def attach_evaluations(self, evaluations: MinibatchEvaluations) -> None:
        self.evaluations = evaluations

    def propose(self, parent: str, feedback: Sequence[ScenarioFeedback]) -> str | None:
        prompt = self.prompt(parent, feedback)
        with self._eval_script([f.scenario for f in feedback]) as (script, spool):
            done = self.backend.propose_in_workdir(
                prompt, parent, eval_script=script, writable_dirs=spool
            )
        self.remember(clip_line(" ".join(done.said.split()), SUMMARY_CHARS))
        return done.text

    @contextmanager
    def _eval_script(self, names: list[str]) -> Iterator[tuple[Path | None, list[Path]]]:
        """The eval script and the folder it writes, while the server runs
        (none when the proposer serves no run)."""
        if self.evaluations is None:
            yield None, []
            return
        with serving(self.evaluations, names) as spool, \
                tempfile.TemporaryDirectory(prefix="routesim-agent-") as tmp:
            # Outside the work dir and the spool: read-only to the agent.
            script = Path(tmp) / "eval_minibatch.sh"
            script.write_text(eval_script(spool))
            script.chmod(0o755)
            yield script, [spool]
