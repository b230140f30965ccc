"""The agentic proposer: a command-line agent (claude, codex) edits the
candidate in a work dir, and may score its edit on the minibatch with an
eval script before it hands the file back."""

from __future__ import annotations

import shlex
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from routesim_evolve.build.gomodule import build_env
from routesim_evolve.propose.base import PromptedProposer
from routesim_evolve.reflect.cli_backend import AgentCLIBackend
from routesim_evolve.reflect.prompts import PromptPack

REPO = Path(__file__).resolve().parents[2]


def minibatch_names(feedback: Sequence[Mapping[str, Any]]) -> list[str]:
    """The scenario names of the minibatch ("name (arena)" in side info)."""
    titles = (str(item.get("Scenario", "")) for item in feedback)
    return [title.split(" (")[0] for title in titles if title]


def eval_script(corpus: Path, names: Sequence[str]) -> str:
    """A shell script that scores a candidate file on the minibatch's scenarios."""
    cmd = [sys.executable, "-m", "routesim_evolve", "eval", "--corpus", str(corpus.resolve()),
           "--split", "train", "--scenarios", ",".join(names)]
    return (
        "#!/bin/sh\n"
        "# Score a candidate (default ./candidate_impl.go) on this iteration's scenarios,\n"
        "# beside lnd-apriori and lnd-bimodal.\n"
        f"cd {shlex.quote(str(REPO))} || exit 1\n"
        f'exec {shlex.join(cmd)} "${{1:-$OLDPWD/candidate_impl.go}}"\n'
    )


class AgenticProposer(PromptedProposer):
    """An agent CLI that edits candidate_impl.go in place."""

    def __init__(self, backend: AgentCLIBackend, pack: PromptPack, corpus: Path) -> None:
        super().__init__(pack)
        self.backend = backend
        self.corpus = corpus
        self.name = f"{backend.name} (agentic)"

    def propose(self, parent: str, feedback: Sequence[Mapping[str, Any]]) -> str | None:
        prompt = self.prompt(parent, feedback)
        with tempfile.TemporaryDirectory(prefix="routesim-agent-") as tmp:
            script = Path(tmp) / "eval_minibatch.sh"
            script.write_text(eval_script(self.corpus, minibatch_names(feedback)))
            script.chmod(0o755)
            go_cache = Path(build_env().get("GOCACHE", Path.home() / ".cache" / "go-build"))
            return self.backend.propose_in_workdir(
                prompt, parent, eval_script=script, writable_dirs=[go_cache]
            )
