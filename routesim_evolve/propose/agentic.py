"""The agentic proposer: a command-line agent (claude, codex) edits the
candidate in a work dir, and may score its edit on the minibatch with an
eval script before it hands the file back.

The script runs `agent-eval` (evolve/agent_eval.py) with the run's own
settings. Besides its work dir the agent may write only two folders: the
agents' sandbox cache (builds and evaluations of agents' edits, shared by
every run on the machine but never read by trusted builds or by the
scorer), and the run's agent-log folder, whose lines are relayed to the
run's log.
"""

from __future__ import annotations

import logging
import shlex
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import orjson
from pydantic import BaseModel, ConfigDict

from routesim_evolve.build.gomodule import cache_root, go_binary, go_env
from routesim_evolve.layout import PROJECT_ROOT
from routesim_evolve.propose.base import PromptedProposer
from routesim_evolve.reflect.cli_backend import AgentCLIBackend
from routesim_evolve.reflect.prompts import HandIn, PromptPack
from routesim_evolve.reflect.propose import SUMMARY_CHARS
from routesim_evolve.score.feedback import ScenarioFeedback
from routesim_evolve.textclip import clip_line

log = logging.getLogger(__name__)

#: The agents' sandbox cache, inside the project cache (see agent_eval.py).
AGENT_CACHE = "agent-sandbox"
#: The folder in the run dir where agent-eval logs, and the log itself.
AGENT_LOG_DIR = "agent-log"
AGENT_LOG = "agent-evals.jsonl"



class AgentWorkspace(BaseModel):
    """Where an agent's eval script reads and writes."""

    model_config = ConfigDict(frozen=True)

    run_dir: Path
    # The trusted cache the run's lnd references are read from.
    references_root: Path

    @property
    def private_cache(self) -> Path:
        return self.references_root / AGENT_CACHE

    @property
    def log_dir(self) -> Path:
        return self.run_dir / AGENT_LOG_DIR

    @property
    def writable(self) -> list[Path]:
        """Every folder the agent may write besides its work dir."""
        return [self.private_cache, self.log_dir]

    @classmethod
    def for_run(cls, run_dir: Path) -> AgentWorkspace:
        return cls(run_dir=run_dir.resolve(), references_root=cache_root())


def eval_script(workspace: AgentWorkspace, names: Sequence[str]) -> str:
    """A shell script that scores a candidate file on the minibatch's scenarios."""
    own = workspace.private_cache
    cmd = [sys.executable, "-m", "routesim_evolve", "agent-eval",
           "--run-dir", str(workspace.run_dir),
           "--references", str(workspace.references_root),
           "--log", str(workspace.log_dir / AGENT_LOG),
           "--scenarios", ",".join(names)]
    env = {"ROUTESIM_CACHE_DIR": str(own), "GOCACHE": str(own / "go-build"),
           "GOMODCACHE": go_env("GOMODCACHE")}
    assignments = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    # The agent's shell may lack the Go toolchain on its PATH (codex's does
    # not search /usr/local/go/bin): the script carries the harness's own.
    toolchain = shlex.quote(str(Path(go_binary()).resolve().parent))
    assignments += f' PATH={toolchain}:"$PATH"'
    return (
        "#!/bin/sh\n"
        "# Score a candidate (default ./candidate_impl.go) on this iteration's scenarios,\n"
        "# as the run scores it, beside lnd-apriori and lnd-bimodal.\n"
        # `python -m routesim_evolve` must import this very checkout.
        f"cd {shlex.quote(str(PROJECT_ROOT))} || exit 1\n"
        f'exec env {assignments} {shlex.join(cmd)} "${{1:-$OLDPWD/candidate_impl.go}}"\n'
    )


class AgenticProposer(PromptedProposer):
    """An agent CLI that edits candidate_impl.go in place."""

    hand_in: HandIn = "edit"

    def __init__(
        self, backend: AgentCLIBackend, pack: PromptPack, workspace: AgentWorkspace
    ) -> None:
        super().__init__(pack)
        self.backend = backend
        self.workspace = workspace
        self.name = f"{backend.name} (agentic)"
        self._log_seen = 0

    def propose(self, parent: str, feedback: Sequence[ScenarioFeedback]) -> str | None:
        prompt = self.prompt(parent, feedback)
        for folder in self.workspace.writable:
            folder.mkdir(parents=True, exist_ok=True)
        try:
            with tempfile.TemporaryDirectory(prefix="routesim-agent-") as tmp:
                script = Path(tmp) / "eval_minibatch.sh"
                script.write_text(eval_script(self.workspace, [f.scenario for f in feedback]))
                script.chmod(0o755)
                done = self.backend.propose_in_workdir(
                    prompt, parent, eval_script=script, writable_dirs=self.workspace.writable
                )
                self.remember(clip_line(" ".join(done.said.split()), SUMMARY_CHARS))
                return done.text
        finally:
            self._relay_agent_evals()

    def _relay_agent_evals(self) -> None:
        """Put what the agent's eval script scored into the run's log."""
        path = self.workspace.log_dir / AGENT_LOG
        if not path.is_file():
            return
        lines = path.read_bytes().splitlines()
        for line in lines[self._log_seen:]:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if record.get("status") == "ok":
                log.info("agent eval: %s scored %s", record.get("scenario"), record.get("score"))
            else:
                log.warning("agent eval: %s: %s: %s", record.get("scenario"),
                            record.get("status"), record.get("reason", ""))
        self._log_seen = len(lines)
