"""Build the proposers a run rotates through from `--reflection-lm` values.

API back-ends (anthropic, openai) reflect in a single call; agent CLIs
(claude, codex) edit the file in a work dir and may score their edit on the
minibatch; `offline` turns the candidate's marked knobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from routesim_evolve.propose.agentic import AgenticProposer
from routesim_evolve.propose.base import Proposer
from routesim_evolve.propose.lm import LMProposer
from routesim_evolve.propose.offline import OfflineProposer
from routesim_evolve.reflect.factory import make_backend, make_cli_backend
from routesim_evolve.reflect.prompts import PromptPack
from routesim_evolve.reflect.spec import LMSpec


class NamedOffline(OfflineProposer):
    """The offline proposer with the name the rotation shows."""

    name = "offline"


def build_proposer(spec: LMSpec, pack: PromptPack, corpus: Path, *, seed: int = 0) -> Proposer:
    """The proposer one `--reflection-lm` value stands for. Raises the
    back-end's BackendUnavailable at start-up (e.g. a missing key)."""
    if spec.kind == "offline":
        return NamedOffline(seed=seed)
    if spec.kind in ("claude", "codex"):
        return AgenticProposer(make_cli_backend(spec), pack, corpus)
    return LMProposer(make_backend(spec), pack)


def build_proposers(
    specs: Sequence[LMSpec], pack: PromptPack, corpus: Path, *, seed: int = 0
) -> list[Proposer]:
    return [build_proposer(s, pack, corpus, seed=seed + i) for i, s in enumerate(specs)]
